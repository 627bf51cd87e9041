// libtorch (CPU) is wired: a small network runs a forward and a backward pass.
#include <gtest/gtest.h>
#include <torch/torch.h>

namespace protuner {
namespace {

TEST(Torch, ForwardAndBackwardPassOnCpu) {
  torch::manual_seed(0);
  torch::nn::Sequential net(torch::nn::Linear(8, 16), torch::nn::ReLU(), torch::nn::Linear(16, 1));
  const torch::Tensor x = torch::randn({4, 8});
  const torch::Tensor y = net->forward(x);
  ASSERT_EQ(y.sizes(), (std::vector<int64_t>{4, 1}));
  y.sum().backward();
  const auto params = net->parameters();
  ASSERT_FALSE(params.empty());
  EXPECT_TRUE(params[0].grad().defined());
  EXPECT_GT(params[0].grad().abs().sum().item<float>(), 0.0f);
}

}  // namespace
}  // namespace protuner
