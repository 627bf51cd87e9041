// Every search algorithm by name, in one place: what `protuner tune --algorithm`,
// HL_PROTUNER_ALGORITHM and the comparison bench accept. The MCTS names are the
// configurations of ProTuner's Table 1 (003_*), plus mcts_0.5s and mcts_cost+real_0.5s.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "searcher/search/search.h"

namespace protuner {

// The accepted names, in the order error messages and --help list them.
const std::vector<std::string> &search_names();

// The search called `name`. Throws ConfigError naming the unknown name and listing the
// accepted ones.
std::unique_ptr<Search> make_search(const std::string &name);

// The algorithm protuner uses when none is named.
inline const char *kDefaultSearch = "mcts_cost+real_1s";

}  // namespace protuner
