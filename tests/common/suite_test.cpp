// Suite files: strict parsing with file:line errors, library resolution, app validation.
#include "common/suite.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "common/errors.h"

namespace protuner {
namespace {
namespace fs = std::filesystem;

class SuiteFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("protuner_suite_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string &text) {
    const std::string path = (dir_ / "suite.yaml").string();
    std::ofstream(path) << text;
    return path;
  }

  // The ConfigError message parsing (and validating, when asked) produces.
  std::string error(const std::string &text, bool validate = false) {
    try {
      Suite s = parse_suite_file(write(text));
      if (validate) validate_suite_apps(s);
    } catch (const ConfigError &e) {
      return e.what();
    }
    return "";
  }

  fs::path dir_;
};

const std::string kLib = PROTUNER_TEST_GENERATOR_LIBRARY;

TEST_F(SuiteFile, ParsesAppsAndAppliesDefaults) {
  Suite s =
      parse_suite_file(write("suite: t\n"
                             "defaults: {budget_minutes: 2.5, seeds: 3}\n"
                             "apps:\n"
                             "  - name: blur\n"
                             "    generator: test_blur\n"
                             "    library: " +
                             kLib +
                             "\n"
                             "    params: {divisor: 2}\n"
                             "  - name: test_blur\n"
                             "    library: " +
                             kLib +
                             "\n"
                             "    seeds: 1\n"));
  EXPECT_EQ(s.name, "t");
  ASSERT_EQ(s.apps.size(), 2u);
  EXPECT_EQ(s.apps[0].spec.generator, "test_blur");
  EXPECT_EQ(s.apps[0].spec.params.at("divisor"), "2");
  EXPECT_DOUBLE_EQ(s.apps[0].budget_minutes, 2.5);
  EXPECT_EQ(s.apps[0].seeds, 3);
  EXPECT_EQ(s.apps[0].line, 4);
  EXPECT_EQ(s.apps[1].spec.generator, "test_blur") << "generator defaults to the name";
  EXPECT_EQ(s.apps[1].seeds, 1);
  EXPECT_EQ(s.apps[0].spec.library, fs::canonical(kLib).string());
  EXPECT_NO_THROW(validate_suite_apps(s));
}

TEST_F(SuiteFile, MalformedYamlNamesFileAndLine) {
  const std::string e = error("suite: t\napps:\n  - name: [unclosed\n");
  EXPECT_NE(e.find("suite.yaml:"), std::string::npos) << e;
  EXPECT_NE(e.find("malformed YAML"), std::string::npos) << e;
}

TEST_F(SuiteFile, UnknownKeyNamesTheKeyAndItsLine) {
  const std::string e =
      error("suite: t\napps:\n  - name: a\n    library: " + kLib + "\n    budjet_minutes: 3\n");
  EXPECT_NE(e.find("suite.yaml:5: unknown key 'budjet_minutes'"), std::string::npos) << e;
}

TEST_F(SuiteFile, MissingRequiredKeysAndBadValuesAreRefused) {
  EXPECT_NE(error("apps: []\n").find("missing required key 'suite'"), std::string::npos);
  EXPECT_NE(error("suite: t\napps: []\n").find("non-empty list"), std::string::npos);
  EXPECT_NE(error("suite: t\napps:\n  - name: a\n").find("missing required key 'library'"),
            std::string::npos);
  const std::string e =
      error("suite: t\napps:\n  - name: a\n    library: " + kLib + "\n    seeds: many\n");
  EXPECT_NE(e.find("suite.yaml:5: 'seeds' has a value of the wrong type"), std::string::npos) << e;
  EXPECT_NE(error("suite: t\napps:\n  - {name: a, library: " + kLib + ", budget_minutes: 0}\n")
                .find("budget_minutes must be > 0"),
            std::string::npos);
}

TEST_F(SuiteFile, DuplicateAppNamesAreRefused) {
  const std::string e = error("suite: t\napps:\n  - {name: a, library: " + kLib +
                              "}\n  - {name: a, library: " + kLib + "}\n");
  EXPECT_NE(e.find("suite.yaml:4: app 'a' is listed twice"), std::string::npos) << e;
}

TEST_F(SuiteFile, MissingLibraryNamesTheLibraryAndLine) {
  const std::string e = error("suite: t\napps:\n  - name: a\n    library: libnothere.so\n");
  EXPECT_NE(e.find("suite.yaml:4: app 'a': library 'libnothere.so' not found"), std::string::npos)
      << e;
}

TEST_F(SuiteFile, ValidationRefusesAMissingGeneratorAtItsLine) {
  const std::string e = error("suite: t\napps:\n  - name: test_blur\n    library: " + kLib +
                                  "\n  - name: nope\n    library: " + kLib + "\n",
                              /*validate=*/true);
  EXPECT_NE(e.find("suite.yaml:5: app 'nope'"), std::string::npos) << e;
  EXPECT_NE(e.find("has no generator 'nope'"), std::string::npos) << e;
}

TEST_F(SuiteFile, ValidationRefusesAnUnknownGeneratorParam) {
  const std::string e = error(
      "suite: t\napps:\n  - name: test_blur\n    library: " + kLib + "\n    params: {sigma: 3}\n",
      /*validate=*/true);
  EXPECT_NE(e.find("suite.yaml:3:"), std::string::npos) << e;
  EXPECT_NE(e.find("sigma"), std::string::npos) << e;
}

TEST(ResolveLibrary, BareNameIsFoundOnProtunerLibraryPath) {
  const fs::path lib(PROTUNER_TEST_GENERATOR_LIBRARY);
  ::setenv("PROTUNER_LIBRARY_PATH", ("/nonexistent:" + lib.parent_path().string()).c_str(), 1);
  EXPECT_EQ(resolve_library(lib.filename().string(), "/"), fs::canonical(lib).string());
  ::unsetenv("PROTUNER_LIBRARY_PATH");
}

}  // namespace
}  // namespace protuner
