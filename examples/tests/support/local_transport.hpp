#pragma once

/// \file
/// LocalNetwork: the ranks of a distributed run as threads of one process, for tests of the
/// protocol: rank 0 and the serving ranks exchange messages as over MPI, and a rank can be made
/// to die (cut off: nothing it sends arrives, nothing reaches it, and it hears nothing more).

#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "distributed/transport.hpp"

namespace tc::testing {

class LocalNetwork {
 public:
  explicit LocalNetwork(int size) {
    for (int r = 0; r < size; ++r) endpoints_.push_back(std::make_unique<Endpoint>(*this, r));
  }
  LocalNetwork(const LocalNetwork&) = delete;
  LocalNetwork& operator=(const LocalNetwork&) = delete;

  /// Rank `r`'s transport.
  Transport& endpoint(int r) { return *endpoints_[static_cast<std::size_t>(r)]; }

  /// Rank `r` dies now.
  void kill(int r) {
    std::lock_guard<std::mutex> lock(mutex_);
    endpoints_[static_cast<std::size_t>(r)]->died_at = now();
  }

 private:
  static double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  }

  struct Endpoint final : Transport {
    Endpoint(LocalNetwork& net, int rank) : net(net), me(rank) {}
    int rank() const override { return me; }
    int size() const override { return static_cast<int>(net.endpoints_.size()); }
    void send(int to, std::string bytes) override {
      std::lock_guard<std::mutex> lock(net.mutex_);
      Endpoint& peer = *net.endpoints_[static_cast<std::size_t>(to)];
      if (died_at || peer.died_at) return;
      peer.inbox.push_back(Envelope{me, std::move(bytes)});
      peer.arrived.notify_one();
    }
    std::optional<Envelope> receive(double max_wait_seconds) override {
      std::unique_lock<std::mutex> lock(net.mutex_);
      arrived.wait_for(lock, std::chrono::duration<double>(max_wait_seconds), [&] { return !inbox.empty(); });
      if (inbox.empty()) return std::nullopt;
      Envelope e = std::move(inbox.front());
      inbox.pop_front();
      return e;
    }
    /// A live rank's transport keeps it heard; a dead one is silent since it died, and hears
    /// nobody since.
    double silence(int from) const override {
      std::lock_guard<std::mutex> lock(net.mutex_);
      const auto& other = net.endpoints_[static_cast<std::size_t>(from)];
      if (died_at) return now() - *died_at;
      return other->died_at ? now() - *other->died_at : 0.0;
    }

    LocalNetwork& net;
    int me;
    std::optional<double> died_at;
    std::deque<Envelope> inbox;
    std::condition_variable arrived;
  };

  std::mutex mutex_;
  std::vector<std::unique_ptr<Endpoint>> endpoints_;
};

}  // namespace tc::testing
