// ZeroMQ (cppzmq) request/reply over loopback TCP: the transport the measurers will use.
#include <gtest/gtest.h>

#include <thread>
#include <zmq.hpp>
#include <zmq_addon.hpp>

namespace protuner {
namespace {

TEST(ZmqLoopback, RequestReplyRoundTripOverTcp) {
  zmq::context_t ctx;
  zmq::socket_t server(ctx, zmq::socket_type::rep);
  server.set(zmq::sockopt::linger, 0);
  server.bind("tcp://127.0.0.1:*");  // a free port, chosen by the kernel
  const std::string endpoint = server.get(zmq::sockopt::last_endpoint);

  std::thread echo([&] {
    std::vector<zmq::message_t> parts;
    const auto n = zmq::recv_multipart(server, std::back_inserter(parts));
    ASSERT_TRUE(n.has_value());
    ASSERT_EQ(*n, 2u);
    std::string reply = parts[0].to_string() + ":" + parts[1].to_string();
    server.send(zmq::buffer(reply), zmq::send_flags::none);
  });

  zmq::socket_t client(ctx, zmq::socket_type::req);
  client.set(zmq::sockopt::linger, 0);
  client.set(zmq::sockopt::rcvtimeo, 5000);
  client.connect(endpoint);
  std::array<zmq::const_buffer, 2> request{zmq::str_buffer("measure"), zmq::str_buffer("42")};
  ASSERT_TRUE(zmq::send_multipart(client, request).has_value());
  zmq::message_t reply;
  ASSERT_TRUE(client.recv(reply).has_value()) << "no reply within 5 s";
  EXPECT_EQ(reply.to_string(), "measure:42");
  echo.join();
}

}  // namespace
}  // namespace protuner
