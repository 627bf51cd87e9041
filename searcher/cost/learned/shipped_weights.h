// The cost-model weights trained for this machine class (weights/README.md), built into the
// binary: `protuner tune --cost-model feedforward` and the plugin's HL_PROTUNER_COST_MODEL
// then work from an installed binary, in any working directory, with no file to find.
// CMake embeds weights/*.weights at configure time (re-run when a file changes).
#pragma once

#include <string>

#include "searcher/cost/learned/learned_network.h"

namespace protuner {

// The bytes of the shipped weights file of `kind`, exactly as in weights/.
const std::string &shipped_weights(LearnedModelKind kind);

// What errors call those bytes in place of a path: "shipped feedforward weights".
std::string shipped_weights_source(LearnedModelKind kind);

}  // namespace protuner
