// TextTable: aligned columns, numbers right-aligned, row width checked.
#include "coordinator/text_table.h"

#include <gtest/gtest.h>

#include <sstream>

namespace protuner {
namespace {

TEST(TextTable, AlignsColumnsAndRightAlignsNumbers) {
  TextTable t({"app", "ms"});
  t.add_row({"harris", "1.5"});
  t.add_row({"x", "123.25"});
  std::ostringstream out;
  t.print(out);
  EXPECT_EQ(out.str(),
            "app     ms    \n"
            "------  ------\n"
            "harris     1.5\n"
            "x       123.25\n");
}

TEST(TextTable, RowOfTheWrongWidthIsRefused) {
  TextTable t({"a", "b"});
  EXPECT_THROW(t.add_row({"only one"}), std::invalid_argument);
}

TEST(FormatFixed, RoundsToTheGivenDecimals) {
  EXPECT_EQ(format_fixed(1.23456, 2), "1.23");
  EXPECT_EQ(format_fixed(2.0, 0), "2");
}

}  // namespace
}  // namespace protuner
