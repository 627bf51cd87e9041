#include "coordinator/text_table.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <iomanip>
#include <stdexcept>

namespace protuner {
namespace {

bool looks_numeric(const std::string &s) {
  return !s.empty() && (std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '-') &&
         std::all_of(s.begin(), s.end(), [](char c) {
           return std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == 'x' ||
                  c == 'e' || c == '+';
         });
}

}  // namespace

void TextTable::add_row(std::vector<std::string> row) {
  if (row.size() != header_.size()) {
    throw std::invalid_argument("TextTable: row has " + std::to_string(row.size()) +
                                " cells, header has " + std::to_string(header_.size()));
  }
  rows_.push_back(std::move(row));
}

void TextTable::print(std::ostream &out) const {
  std::vector<size_t> width(header_.size());
  for (size_t c = 0; c < header_.size(); ++c) {
    width[c] = header_[c].size();
    for (const auto &r : rows_) width[c] = std::max(width[c], r[c].size());
  }
  auto line = [&](const std::vector<std::string> &cells, bool is_header) {
    for (size_t c = 0; c < cells.size(); ++c) {
      const bool right = !is_header && looks_numeric(cells[c]);
      out << (c ? "  " : "") << (right ? std::right : std::left)
          << std::setw(static_cast<int>(width[c])) << cells[c];
    }
    out << std::left << "\n";
  };
  line(header_, true);
  std::string rule;
  for (size_t c = 0; c < width.size(); ++c) rule += (c ? "  " : "") + std::string(width[c], '-');
  out << rule << "\n";
  for (const auto &r : rows_) line(r, false);
}

std::string format_fixed(double value, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, value);
  return buf;
}

}  // namespace protuner
