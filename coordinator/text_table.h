// A plain-text table for terminal reports: columns sized to their widest cell, numbers
// right-aligned. Every CLI report prints through it so they all look alike.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace protuner {

class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header) : header_(std::move(header)) {}
  // A row must have as many cells as the header; throws std::invalid_argument otherwise.
  void add_row(std::vector<std::string> row);
  void print(std::ostream &out) const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

// "12.345" style formatting with a fixed number of decimals.
std::string format_fixed(double value, int decimals);

}  // namespace protuner
