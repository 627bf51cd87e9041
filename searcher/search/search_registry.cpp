// Every search algorithm by name (see search_registry.h).
#include "searcher/search/search_registry.h"

#include "common/errors.h"
#include "searcher/search/beam_search.h"
#include "searcher/search/mcts.h"
#include "searcher/search/random_search.h"

namespace protuner {

const std::vector<std::string> &search_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n = mcts_configuration_names();
    n.insert(n.end(), {"beam", "beam_lookahead", "greedy", "random"});
    return n;
  }();
  return names;
}

std::unique_ptr<Search> make_search(const std::string &name) {
  MctsOptions mcts;
  if (mcts_options_for(name, mcts)) return std::make_unique<MctsSearch>(mcts, name);
  if (name == "beam") return std::make_unique<BeamSearch>(BeamSearchOptions{}, name);
  if (name == "beam_lookahead") return std::make_unique<BeamSearch>(lookahead_beam_options(), name);
  if (name == "greedy") return std::make_unique<BeamSearch>(greedy_options(), name);
  if (name == "random") return std::make_unique<RandomSearch>(RandomSearchOptions{}, name);
  std::string valid;
  for (const std::string &n : search_names()) valid += (valid.empty() ? "" : ", ") + n;
  throw ConfigError("unknown search algorithm '" + name + "'; valid names: " + valid);
}

}  // namespace protuner
