// The measurer client's one poll loop (measurer_client.h): per endpoint a DEALER socket and
// a small state machine (connecting, live, dead), per request its attempts. Each turn of the
// loop hands waiting requests to idle live measurers, reads replies and heartbeats, pings,
// and expires silent measurers and overdue requests, which go back to the waiting list.
#include "searcher/measurement/measurer_client.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <deque>
#include <limits>
#include <optional>
#include <random>
#include <set>
#include <thread>
#include <zmq.hpp>
#include <zmq_addon.hpp>

namespace protuner {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// The longest the loop sleeps in one poll, so a deadline is never missed by much.
constexpr milliseconds kMaxPollWait{100};

enum class LinkState { kConnecting, kLive, kDead };

std::string seconds_text(Clock::duration d) {
  return fmt::format("{:.1f} s", std::chrono::duration<double>(d).count());
}

// A random tag per client makes request ids and routing ids unique across the clients of
// one measurer, and request ids unique across attempts, so a late reply to an abandoned
// attempt is recognised and dropped.
std::string random_tag() {
  std::random_device rd;
  return fmt::format("{:08x}{:08x}", rd(), rd());
}

constexpr auto kNoDeadline = std::numeric_limits<Clock::rep>::max();

// One measurer endpoint: its socket and what this client knows about it.
struct Link {
  size_t index = 0;  // unique within the client, never reused: part of the socket's routing id
  std::string endpoint;
  std::unique_ptr<zmq::socket_t> socket;
  LinkState state = LinkState::kDead;
  Clock::time_point state_since, last_heard, last_ping, reconnect_at;
  milliseconds backoff{0};
  milliseconds heartbeat{0};  // max(client's interval, the daemon's announced one)
  // How often to ping: min(client's interval, the daemon's), so the daemon, which drops
  // the queued requests of a client silent for `liveness` of its intervals, never takes
  // this client for gone.
  milliseconds ping_interval{0};
  std::string instance;       // the daemon's, from its ready message
  int64_t ping_seq = 0;       // the last ping's sequence number
  // The measurer's load as its last heartbeat gave it (running + queued, all clients), and
  // when that heartbeat came: other searchers share the measurer, so an idle link here can
  // still have a queue there.
  int load = 0;
  Clock::time_point load_heard;

  // The one request outstanding here (index into the batch), if any.
  std::optional<size_t> outstanding;
  std::string outstanding_id;
  // The ping sent right after the outstanding request: a heartbeat acknowledging it that
  // does not list the request means the measurer does not have it (wire.h).
  int64_t proof_seq = 0;
  // A heartbeat since that ping says the outstanding request waits behind others' there.
  bool outstanding_queued = false;
  Clock::time_point deadline;
  // After a request timed out here, no new work until heartbeats show the measurer has
  // dropped it (it may still be stuck on it).
  std::string draining_id;

  int64_t answered = 0;
};

}  // namespace

struct MeasurerClient::Impl {
  Impl(std::vector<std::string> endpoints, ClientOptions opts)
      : options(opts), tag(random_tag()) {
    for (auto &e : endpoints) add_link(std::move(e));
  }

  // A new link, not yet connected. Its index is never reused, so its routing id is new.
  Link &add_link(std::string endpoint) {
    Link link;
    link.index = next_link_index++;
    link.endpoint = std::move(endpoint);
    link.heartbeat = options.heartbeat_interval;
    link.ping_interval = options.heartbeat_interval;
    link.backoff = options.heartbeat_interval;
    links.push_back(std::move(link));
    return links.back();
  }
  // Makes `endpoints` the link list, keeping the links (and what is known of them) of the
  // endpoints that stay. Between batches only: no link holds a request then.
  void replace_links(const std::vector<std::string> &endpoints, Clock::time_point now);

  milliseconds expiry(const Link &link) const { return link.heartbeat * options.liveness; }
  milliseconds request_timeout(const MeasureRequest &r) const;
  void connect(Link &link, Clock::time_point now);
  void ping(Link &link, Clock::time_point now);
  bool send(Link &link, const wire::Message &message);

  ClientOptions options;
  std::string tag;
  uint64_t next_id = 1;
  size_t next_link_index = 0;
  size_t rotation = 0;  // where pick_link starts, so equally loaded measurers take turns
  zmq::context_t context;
  std::vector<Link> links;
  Stats stats;
};

// One measure_batch call: the requests, their results and attempt histories.
class MeasurerClient::Batch {
 public:
  Batch(MeasurerClient::Impl &client, const std::vector<MeasureRequest> &requests,
        const std::atomic<Clock::rep> &deadline)
      : c_(client),
        deadline_(deadline),
        requests_(requests),
        results_(requests.size()),
        attempts_(requests.size()),
        history_(requests.size()),
        tried_(requests.size()),
        moves_(requests.size()) {
    for (size_t i = 0; i < requests.size(); ++i) waiting_.push_back(i);
  }

  std::vector<MeasureResult> run();

 private:
  void start_links(Clock::time_point now);
  void assign(Clock::time_point now);
  bool send_request(size_t request, size_t link, Clock::time_point now);
  void rebalance(Clock::time_point now);
  std::optional<size_t> pick_link(size_t request, Clock::time_point now) const;
  void poll(Clock::time_point now);
  void receive(Link &link);
  void handle(Link &link, const wire::Message &message, Clock::time_point now);
  void on_heartbeat(Link &link, const wire::HeartbeatBody &hb, Clock::time_point now);
  void housekeeping(Clock::time_point now);
  void kill_link(Link &link, const std::string &why, Clock::time_point now);
  void attempt_failed(Link &link, const std::string &why);
  void finish(size_t request, MeasureResult result);
  void give_up_waiting(Clock::time_point now);
  bool past_deadline(Clock::time_point now) const;
  void cancel_unanswered();

  MeasurerClient::Impl &c_;
  const std::atomic<Clock::rep> &deadline_;
  const std::vector<MeasureRequest> &requests_;
  std::vector<std::optional<MeasureResult>> results_;
  std::vector<int> attempts_;
  std::vector<std::vector<std::string>> history_;  // per request: what happened to each attempt
  std::vector<std::set<size_t>> tried_;            // per request: links it was sent to
  std::vector<int> moves_;                         // per request: times rebalance moved it
  std::deque<size_t> waiting_;
  size_t done_ = 0;
  Clock::time_point last_usable_;  // last time some measurer could take work
  Clock::time_point started_;      // when run() began: heartbeats before it are stale
};

std::vector<MeasureResult> MeasurerClient::Batch::run() {
  const auto start = Clock::now();
  last_usable_ = start;
  started_ = start;
  if (!past_deadline(start)) start_links(start);
  while (done_ < requests_.size()) {
    auto now = Clock::now();
    if (past_deadline(now)) {
      cancel_unanswered();
      break;
    }
    assign(now);
    rebalance(now);
    poll(now);
    now = Clock::now();
    housekeeping(now);
    give_up_waiting(now);
  }
  std::vector<MeasureResult> out;
  out.reserve(results_.size());
  for (auto &r : results_) out.push_back(std::move(*r));
  return out;
}

// Links idle since the last batch have not pinged (nor been pinged) meanwhile; they must
// prove themselves alive again before they get work, without being declared dead for the
// silence between batches.
void MeasurerClient::Batch::start_links(Clock::time_point now) {
  for (Link &link : c_.links) {
    if (link.state == LinkState::kDead && now < link.reconnect_at) continue;
    if (!link.socket) {
      c_.connect(link, now);
    } else if (now - link.last_heard > c_.expiry(link)) {
      link.state = LinkState::kConnecting;
      link.state_since = now;
    }
    c_.ping(link, now);
  }
}

void MeasurerClient::Batch::assign(Clock::time_point now) {
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    const auto pick = pick_link(*it, now);
    // Not sent when the socket would block: tried again next turn.
    if (pick && send_request(*it, *pick, now)) {
      it = waiting_.erase(it);
    } else {
      ++it;
    }
  }
}

// Sends `request` to link `index` as a new attempt; false when its socket would block.
bool MeasurerClient::Batch::send_request(size_t request, size_t index, Clock::time_point now) {
  Link &link = c_.links[index];
  c_.rotation = index + 1;
  const std::string id = c_.tag + "-" + std::to_string(c_.next_id++);
  if (!c_.send(link, wire::measure_message(id, requests_[request]))) return false;
  ++c_.stats.sent;
  ++attempts_[request];
  tried_[request].insert(index);
  link.outstanding = request;
  link.outstanding_id = id;
  link.outstanding_queued = false;
  link.deadline = now + c_.request_timeout(requests_[request]);
  c_.ping(link, now);
  link.proof_seq = link.ping_seq;
  return true;
}

// A request waiting in one measurer's queue moves to a measurer whose heartbeat says it
// has gone idle (the daemon announces that at once): the choice when it was sent read loads
// up to a heartbeat old, and other searchers' requests may have arrived first since. The
// measurer it leaves is told to drop it; should it have started on it meanwhile, its late
// result is dropped here, and it gets no work from this client until its heartbeats let go
// of the request, as after a cancel. A move is not a failed attempt; a request moves at
// most kMaxMoves times, so loads that change faster than heartbeats tell cannot bounce it.
void MeasurerClient::Batch::rebalance(Clock::time_point now) {
  constexpr int kMaxMoves = 2;
  std::set<size_t> taken;  // idle links claimed this turn
  for (size_t from = 0; from < c_.links.size(); ++from) {
    Link &queued = c_.links[from];
    if (!queued.outstanding || !queued.outstanding_queued) continue;
    const size_t request = *queued.outstanding;
    if (moves_[request] >= kMaxMoves) continue;
    std::optional<size_t> to;
    for (size_t i = 0; i < c_.links.size() && !to; ++i) {
      const Link &l = c_.links[i];
      if (l.state == LinkState::kLive && !l.outstanding && l.draining_id.empty() && l.load == 0 &&
          l.load_heard >= started_ && !taken.count(i)) {
        to = i;
      }
    }
    if (!to) return;  // nothing idle: nothing moves
    c_.send(queued, wire::cancel_message(queued.outstanding_id));
    queued.draining_id = queued.outstanding_id;
    queued.outstanding.reset();
    queued.outstanding_queued = false;
    --attempts_[request];
    ++moves_[request];
    ++c_.stats.moved;
    taken.insert(*to);
    spdlog::debug("measurer client: moving request {} from {}'s queue to idle {}", request,
                  queued.endpoint, c_.links[*to].endpoint);
    if (!send_request(request, *to, now)) waiting_.push_front(request);  // sent next turn
  }
}

// The least loaded idle live measurer this request has not been tried on (load as its
// heartbeats give it, ties taken in turn). When several could take it and one of them has
// not answered this batch's first ping yet, the choice waits for that answer, up to
// `load_probe_wait`: a load heard before the batch is stale; so does a choice of a measurer
// not known to be free while another is still connecting. A measurer the request failed
// on gets it again only when every usable measurer has failed it: a retry waits for a busy
// or still-connecting fresh measurer rather than go straight back to the one that just lost
// it (a connecting one turns live or dead within a few heartbeat intervals).
std::optional<size_t> MeasurerClient::Batch::pick_link(size_t request,
                                                      Clock::time_point now) const {
  std::optional<size_t> best, fallback;
  bool fresh_busy = false, unheard = false, connecting = false;
  int candidates = 0;
  const size_t n = c_.links.size();
  for (size_t k = 0; k < n; ++k) {
    const size_t i = (c_.rotation + k) % n;
    const Link &l = c_.links[i];
    const bool tried = tried_[request].count(i) > 0;
    if (l.state == LinkState::kConnecting) {
      fresh_busy = fresh_busy || !tried;
      connecting = connecting || !tried;
      continue;
    }
    if (l.state != LinkState::kLive || !l.draining_id.empty()) continue;
    if (l.outstanding) {
      fresh_busy = fresh_busy || !tried;
      continue;
    }
    if (tried) {
      if (!fallback) fallback = i;
      continue;
    }
    ++candidates;
    unheard = unheard || l.load_heard < started_;
    if (!best || l.load < c_.links[*best].load) best = i;
  }
  if (best) {
    // Worth waiting for: the loads of the other candidates, or a measurer still connecting
    // when the best one is not known to be free.
    const Link &b = c_.links[*best];
    const bool best_free = b.load_heard >= started_ && b.load == 0;
    const bool wait = now - started_ < c_.options.load_probe_wait &&
                      ((candidates > 1 && unheard) || (connecting && !best_free));
    return wait ? std::nullopt : best;
  }
  return fresh_busy ? std::nullopt : fallback;
}

void MeasurerClient::Batch::poll(Clock::time_point now) {
  std::vector<zmq::pollitem_t> items;
  std::vector<size_t> owners;
  milliseconds wait = kMaxPollWait;
  for (size_t i = 0; i < c_.links.size(); ++i) {
    Link &l = c_.links[i];
    if (!l.socket) continue;
    items.push_back({l.socket->handle(), 0, ZMQ_POLLIN, 0});
    owners.push_back(i);
    const auto to_ping =
        std::chrono::duration_cast<milliseconds>(l.last_ping + l.ping_interval - now);
    wait = std::max(milliseconds(0), std::min(wait, to_ping));
  }
  if (items.empty()) {
    std::this_thread::sleep_for(wait);
    return;
  }
  try {
    zmq::poll(items.data(), items.size(), wait);
  } catch (const zmq::error_t &e) {
    if (e.num() != EINTR) throw;
    return;
  }
  for (size_t k = 0; k < items.size(); ++k) {
    if (items[k].revents & ZMQ_POLLIN) receive(c_.links[owners[k]]);
  }
}

void MeasurerClient::Batch::receive(Link &link) {
  while (link.socket) {
    std::vector<zmq::message_t> frames;
    std::optional<size_t> n;
    try {
      n = zmq::recv_multipart(*link.socket, std::back_inserter(frames), zmq::recv_flags::dontwait);
    } catch (const zmq::error_t &e) {
      if (e.num() == EINTR) continue;
      throw;
    }
    if (!n || frames.empty()) return;
    const auto now = Clock::now();
    // Any message proves the measurer's I/O loop is alive.
    link.last_heard = now;
    if (link.state != LinkState::kLive) {
      spdlog::info("measurer client: {} is live", link.endpoint);
      link.state = LinkState::kLive;
      link.state_since = now;
      link.backoff = c_.options.heartbeat_interval;
    }
    wire::Message message;
    try {
      message = wire::parse_message(frames.back().to_string_view());
      handle(link, message, now);
    } catch (const wire::WireError &e) {
      spdlog::warn("measurer client: unreadable message from {}: {}", link.endpoint, e.what());
      if (link.outstanding && e.id() == link.outstanding_id) {
        attempt_failed(link, std::string("unreadable reply: ") + e.what());
      }
    }
  }
}

void MeasurerClient::Batch::handle(Link &link, const wire::Message &message, Clock::time_point now) {
  const bool ours = link.outstanding && message.id == link.outstanding_id;
  switch (message.type) {
    case wire::MessageType::kReady: {
      const wire::ReadyBody ready = wire::read_ready(message);
      link.heartbeat = std::max(c_.options.heartbeat_interval, milliseconds(ready.heartbeat_ms));
      link.ping_interval = std::min(c_.options.heartbeat_interval,
                                    std::max(milliseconds(1), milliseconds(ready.heartbeat_ms)));
      // A new instance while a request is outstanding: the daemon restarted and forgot it.
      // (The same instance greets again after forgetting a client that went quiet.)
      const bool restarted = !link.instance.empty() && ready.instance != link.instance;
      link.instance = ready.instance;
      if (restarted && link.outstanding) {
        attempt_failed(link, "the measurer restarted and lost the request");
      }
      return;
    }
    case wire::MessageType::kHeartbeat:
      on_heartbeat(link, wire::read_heartbeat(message), now);
      return;
    case wire::MessageType::kResult:
      if (!ours) {
        spdlog::debug("measurer client: dropping a late result '{}' from {}", message.id,
                      link.endpoint);
        return;
      }
      {
        MeasureResult result = wire::read_result(message);  // may throw: still outstanding
        if (result.status == MeasureStatus::kMeasurerError) {
          // That measurer is broken, not the candidate: another one may measure it.
          ++link.answered;
          attempt_failed(link, "the measurer could not measure: " + result.error);
          return;
        }
        const size_t request = *link.outstanding;
        link.outstanding.reset();
        ++link.answered;
        finish(request, std::move(result));
      }
      return;
    case wire::MessageType::kError: {
      const wire::ErrorBody error = wire::read_error(message);
      if (!ours) {
        spdlog::warn("measurer client: {} reported: {}", link.endpoint, error.error);
        return;
      }
      if (error.retry) {
        kill_link(link, error.error, now);  // it is going away; retry elsewhere
        return;
      }
      const size_t request = *link.outstanding;
      link.outstanding.reset();
      MeasureResult refused;
      refused.status = MeasureStatus::kBadRequest;
      refused.error = "measurer " + link.endpoint + " refused the request: " + error.error;
      finish(request, std::move(refused));
      return;
    }
    case wire::MessageType::kMeasure:
    case wire::MessageType::kCancel:
      spdlog::warn("measurer client: {} sent a {} message; ignored", link.endpoint,
                   wire::type_name(message.type));
      return;
  }
}

void MeasurerClient::Batch::on_heartbeat(Link &link, const wire::HeartbeatBody &hb, Clock::time_point now) {
  const auto held = [&](const std::string &id) {
    return std::find(hb.pending.begin(), hb.pending.end(), id) != hb.pending.end();
  };
  link.load = hb.queue_length + (hb.busy ? 1 : 0);
  link.load_heard = now;
  if (!link.draining_id.empty() && !held(link.draining_id)) link.draining_id.clear();
  if (!link.outstanding) return;
  if (link.proof_seq > 0 && hb.seq >= link.proof_seq && !held(link.outstanding_id)) {
    ++c_.stats.lost;
    attempt_failed(link, "its heartbeat does not list the request (lost on the way or "
                         "forgotten by the measurer)");
    return;
  }
  // Still queued behind other clients' requests: the deadline counts from when it starts.
  if (held(link.outstanding_id) && hb.running != link.outstanding_id) {
    link.deadline = now + c_.request_timeout(requests_[*link.outstanding]);
  }
  // A heartbeat that has read the ping sent after the request knows where it stands: behind
  // another request that runs. (A measurer not busy starts the request it has just read.)
  link.outstanding_queued = link.proof_seq > 0 && hb.seq >= link.proof_seq && hb.busy &&
                            held(link.outstanding_id) && hb.running != link.outstanding_id;
}

void MeasurerClient::Batch::housekeeping(Clock::time_point now) {
  for (Link &link : c_.links) {
    switch (link.state) {
      case LinkState::kLive:
        if (now - link.last_heard > c_.expiry(link)) {
          kill_link(link, "no heartbeat for " + seconds_text(now - link.last_heard), now);
        } else if (link.outstanding && now > link.deadline) {
          const std::string id = link.outstanding_id;
          attempt_failed(link, "no result within " +
                                   seconds_text(c_.request_timeout(requests_[*link.outstanding])) +
                                   " of starting");
          link.draining_id = id;
        }
        break;
      case LinkState::kConnecting:
        if (now - link.state_since > c_.expiry(link)) {
          kill_link(link, "no answer to pings for " + seconds_text(now - link.state_since), now);
        }
        break;
      case LinkState::kDead:
        if (now >= link.reconnect_at) c_.connect(link, now);
        break;
    }
    if (link.socket && now - link.last_ping >= link.ping_interval) c_.ping(link, now);
    if (link.state == LinkState::kLive && link.draining_id.empty()) last_usable_ = now;
  }
}

void MeasurerClient::Batch::kill_link(Link &link, const std::string &why, Clock::time_point now) {
  spdlog::warn("measurer client: {} is dead ({}); reconnecting in {}", link.endpoint, why,
               seconds_text(link.backoff));
  ++c_.stats.deaths;
  if (link.outstanding) attempt_failed(link, why);
  // A fresh socket later: the old one would deliver queued messages to a restarted daemon.
  link.socket.reset();
  link.state = LinkState::kDead;
  link.state_since = now;
  link.draining_id.clear();
  link.reconnect_at = now + link.backoff;
  link.backoff = std::min(link.backoff * 2, c_.options.max_reconnect_backoff);
}

void MeasurerClient::Batch::attempt_failed(Link &link, const std::string &why) {
  const size_t request = *link.outstanding;
  link.outstanding.reset();
  history_[request].push_back("attempt " + std::to_string(attempts_[request]) + " on " +
                              link.endpoint + ": " + why);
  if (attempts_[request] >= c_.options.max_attempts) {
    MeasureResult failed;
    failed.status = MeasureStatus::kTimeout;
    failed.error = "no measurer answered after " + std::to_string(attempts_[request]) +
                   " attempts";
    for (const auto &h : history_[request]) failed.error += "; " + h;
    ++c_.stats.gave_up;
    finish(request, std::move(failed));
    return;
  }
  spdlog::warn("measurer client: retrying request {} ({}): {}", request,
               requests_[request].app.name, history_[request].back());
  ++c_.stats.retried;
  waiting_.push_front(request);
}

void MeasurerClient::Batch::finish(size_t request, MeasureResult result) {
  if (results_[request]) return;
  results_[request] = std::move(result);
  ++done_;
}

// With no usable measurer for too long, what is still waiting cannot be answered.
void MeasurerClient::Batch::give_up_waiting(Clock::time_point now) {
  if (waiting_.empty() || now - last_usable_ <= c_.options.no_measurer_timeout) return;
  std::string why = "no measurer usable for " + seconds_text(now - last_usable_) + " (";
  for (size_t i = 0; i < c_.links.size(); ++i) {
    const Link &l = c_.links[i];
    why += (i ? ", " : "") + l.endpoint + ": " +
           (l.state == LinkState::kLive ? "stuck on a timed-out request"
            : l.state == LinkState::kConnecting ? "not answering"
                                                 : "dead");
  }
  why += ")";
  for (size_t request : waiting_) {
    MeasureResult failed;
    failed.status = MeasureStatus::kTimeout;
    failed.error = why;
    for (const auto &h : history_[request]) failed.error += "; " + h;
    ++c_.stats.gave_up;
    finish(request, std::move(failed));
  }
  waiting_.clear();
}

bool MeasurerClient::Batch::past_deadline(Clock::time_point now) const {
  return now.time_since_epoch().count() >= deadline_.load();
}

// The measurers holding this batch's requests are told to drop them; every request not
// answered yet comes back cancelled.
void MeasurerClient::Batch::cancel_unanswered() {
  for (Link &link : c_.links) {
    if (!link.outstanding) continue;
    c_.send(link, wire::cancel_message(link.outstanding_id));
    // It may be running there: no new work for it until its heartbeats let go of it.
    link.draining_id = link.outstanding_id;
    link.outstanding.reset();
  }
  waiting_.clear();
  for (size_t request = 0; request < requests_.size(); ++request) {
    if (results_[request]) continue;
    MeasureResult cancelled;
    cancelled.status = MeasureStatus::kCancelled;
    cancelled.error = "cancelled: the client's deadline passed before a measurer answered";
    for (const auto &h : history_[request]) cancelled.error += "; " + h;
    ++c_.stats.cancelled;
    finish(request, std::move(cancelled));
  }
}

milliseconds MeasurerClient::Impl::request_timeout(const MeasureRequest &r) const {
  if (options.request_timeout.count() > 0) return options.request_timeout;
  const double seconds =
      2 * r.settings.compile_timeout_seconds + r.settings.run_timeout_seconds;
  return milliseconds(static_cast<int64_t>(seconds * 1000)) + options.request_timeout_slack;
}

void MeasurerClient::Impl::connect(Link &link, Clock::time_point now) {
  link.socket = std::make_unique<zmq::socket_t>(context, zmq::socket_type::dealer);
  link.socket->set(zmq::sockopt::linger, 0);
  link.socket->set(zmq::sockopt::maxmsgsize, wire::kMaxMessageBytes);
  // Stable across reconnects, so the daemon's replies follow this client to its new
  // connection (wire.h).
  link.socket->set(zmq::sockopt::routing_id, wire::client_routing_id(tag, link.index));
  try {
    link.socket->connect(link.endpoint);
  } catch (const zmq::error_t &e) {
    link.socket.reset();
    throw ConfigError("measurer client: cannot connect to '" + link.endpoint + "': " + e.what());
  }
  link.state = LinkState::kConnecting;
  link.state_since = now;
  link.last_heard = now;
  link.heartbeat = options.heartbeat_interval;
  ping(link, now);
}

void MeasurerClient::Impl::ping(Link &link, Clock::time_point now) {
  link.last_ping = now;
  send(link, wire::ping_message(++link.ping_seq));
}

bool MeasurerClient::Impl::send(Link &link, const wire::Message &message) {
  if (!link.socket) return false;
  const std::string frame = wire::format_message(message);
  return link.socket->send(zmq::buffer(frame), zmq::send_flags::dontwait).has_value();
}

MeasurerClient::MeasurerClient(std::vector<std::string> endpoints, ClientOptions options)
    : deadline_(kNoDeadline) {
  if (options.heartbeat_interval.count() <= 0 || options.liveness < 1 ||
      options.max_attempts < 1 || options.no_measurer_timeout.count() <= 0 ||
      options.load_probe_wait.count() < 0) {
    throw ConfigError("measurer client: heartbeat interval, liveness, max attempts and the "
                      "no-measurer timeout must be positive");
  }
  impl_ = std::make_unique<Impl>(std::move(endpoints), options);
  // Connect now: ZeroMQ connects in the background, so the first batch does not wait.
  const auto now = Clock::now();
  for (Link &link : impl_->links) impl_->connect(link, now);
}

MeasurerClient::~MeasurerClient() = default;

void MeasurerClient::Impl::replace_links(const std::vector<std::string> &endpoints,
                                         Clock::time_point now) {
  const bool same = links.size() == endpoints.size() &&
                    std::all_of(links.begin(), links.end(), [&](const Link &l) {
                      return std::find(endpoints.begin(), endpoints.end(), l.endpoint) !=
                             endpoints.end();
                    });
  if (same) return;  // the usual case: the registry did not change
  std::vector<Link> kept;
  for (Link &link : links) {
    if (std::find(endpoints.begin(), endpoints.end(), link.endpoint) != endpoints.end()) {
      kept.push_back(std::move(link));
    } else {
      spdlog::info("measurer client: {} is no longer used", link.endpoint);
    }
  }
  links = std::move(kept);
  for (const std::string &e : endpoints) {
    const bool known = std::any_of(links.begin(), links.end(),
                                   [&](const Link &l) { return l.endpoint == e; });
    if (!known) {
      spdlog::info("measurer client: using {}", e);
      connect(add_link(e), now);
    }
  }
}

void MeasurerClient::set_endpoints(std::vector<std::string> endpoints) {
  std::lock_guard<std::mutex> lock(pending_mutex_);
  pending_endpoints_ = std::move(endpoints);
}

std::vector<MeasureResult> MeasurerClient::measure_batch(const std::vector<MeasureRequest> &requests) {
  std::lock_guard<std::mutex> lock(mutex_);
  {
    std::lock_guard<std::mutex> pending(pending_mutex_);
    if (pending_endpoints_) {
      impl_->replace_links(*pending_endpoints_, Clock::now());
      pending_endpoints_.reset();
    }
  }
  if (requests.empty()) return {};
  return Batch(*impl_, requests, deadline_).run();
}

void MeasurerClient::set_deadline(Clock::time_point deadline) {
  deadline_.store(deadline.time_since_epoch().count());
}

void MeasurerClient::clear_deadline() { deadline_.store(kNoDeadline); }

void MeasurerClient::cancel_all() { set_deadline(Clock::now()); }

MeasureResult MeasurerClient::measure(const MeasureRequest &request) {
  return measure_batch({request}).front();
}

MeasurerClient::Stats MeasurerClient::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  Stats s = impl_->stats;
  for (const Link &l : impl_->links) s.answered.push_back(l.answered);
  return s;
}

}  // namespace protuner
