#include "distributed/mpi_transport.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>

#if TC_HAVE_MPI
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <deque>
#include <list>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>
#endif

namespace tc {

namespace {

std::optional<int> env_int(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  if (*end != '\0' || n < 0 || n > 1 << 24) return std::nullopt;
  return static_cast<int>(n);
}

}  // namespace

std::optional<MpiLaunch> mpi_launch() {
  for (const auto& [rank_var, size_var] : {std::pair{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
                                           std::pair{"PMI_RANK", "PMI_SIZE"}}) {
    std::optional<int> rank = env_int(rank_var);
    std::optional<int> size = env_int(size_var);
    if (rank && size && *rank < *size) {
      const char* recovery = std::getenv("OMPI_MCA_orte_enable_recovery");
      return MpiLaunch{*rank, *size, recovery != nullptr && std::string(recovery) == "1"};
    }
  }
  return std::nullopt;
}

bool have_mpi() { return TC_HAVE_MPI != 0; }

#if TC_HAVE_MPI

namespace {

constexpr int kDataTag = 1;
constexpr int kHeartbeatTag = 2;

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

struct MpiTransport::State {
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0;
  int size = 1;
  double heartbeat_seconds = 0.5;
  std::thread thread;

  mutable std::mutex mutex;
  std::condition_variable arrived;
  std::deque<Envelope> inbox;
  std::deque<std::pair<int, std::string>> outbox;
  std::vector<double> last_heard;
  bool stopping = false;
  double flush_deadline = 0;
  bool flushed = false;
  bool ended = false;

  /// A send in flight.
  struct Sending {
    MPI_Request request;
    std::string bytes;
    int to;
    bool heartbeat;
  };

  /// The thread's loop: every MPI call after MPI_Init is made here.
  void run() {
    std::list<Sending> sending;
    std::vector<bool> beat_in_flight(static_cast<std::size_t>(size), false);
    double next_beat = 0;
    double idle_sleep = 50e-6;
    for (;;) {
      bool busy = false;
      std::deque<std::pair<int, std::string>> out;
      bool stop = false;
      double deadline = 0;
      {
        std::lock_guard<std::mutex> lock(mutex);
        out.swap(outbox);
        stop = stopping;
        deadline = flush_deadline;
      }
      for (auto& [to, bytes] : out) {
        sending.push_back(Sending{MPI_REQUEST_NULL, std::move(bytes), to, false});
        Sending& s = sending.back();
        if (MPI_Isend(s.bytes.data(), static_cast<int>(s.bytes.size()), MPI_BYTE, to, kDataTag, comm, &s.request) !=
            MPI_SUCCESS) {
          sending.pop_back();
        }
        busy = true;
      }
      for (auto it = sending.begin(); it != sending.end();) {
        int done = 0;
        if (MPI_Test(&it->request, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS || done) {
          if (it->heartbeat) beat_in_flight[static_cast<std::size_t>(it->to)] = false;
          it = sending.erase(it);
          busy = true;
        } else {
          ++it;
        }
      }
      const double now = now_seconds();
      if (now >= next_beat) {
        next_beat = now + heartbeat_seconds;
        for (int to = 0; to < size; ++to) {
          if (to == rank || (rank != 0 && to != 0) || beat_in_flight[static_cast<std::size_t>(to)]) continue;
          sending.push_back(Sending{MPI_REQUEST_NULL, {}, to, true});
          if (MPI_Isend(nullptr, 0, MPI_BYTE, to, kHeartbeatTag, comm, &sending.back().request) == MPI_SUCCESS) {
            beat_in_flight[static_cast<std::size_t>(to)] = true;
          } else {
            sending.pop_back();
          }
        }
      }
      for (int k = 0; k < 64; ++k) {
        int flag = 0;
        MPI_Status status;
        if (MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag, &status) != MPI_SUCCESS || !flag) break;
        int count = 0;
        MPI_Get_count(&status, MPI_BYTE, &count);
        std::string bytes(static_cast<std::size_t>(std::max(count, 0)), '\0');
        if (MPI_Recv(bytes.data(), count, MPI_BYTE, status.MPI_SOURCE, status.MPI_TAG, comm, MPI_STATUS_IGNORE) !=
            MPI_SUCCESS) {
          break;
        }
        busy = true;
        std::lock_guard<std::mutex> lock(mutex);
        last_heard[static_cast<std::size_t>(status.MPI_SOURCE)] = now_seconds();
        if (status.MPI_TAG == kDataTag) {
          inbox.push_back(Envelope{status.MPI_SOURCE, std::move(bytes)});
          arrived.notify_one();
        }
      }
      if (stop) {
        const bool data_left = std::any_of(sending.begin(), sending.end(), [](const Sending& s) { return !s.heartbeat; });
        if (!data_left || now_seconds() > deadline) {
          // Heartbeats still in flight complete on their own; their requests are let go.
          for (Sending& s : sending) MPI_Request_free(&s.request);
          std::lock_guard<std::mutex> lock(mutex);
          flushed = !data_left;
          return;
        }
      }
      if (busy) {
        idle_sleep = 50e-6;
      } else {
        std::this_thread::sleep_for(std::chrono::duration<double>(idle_sleep));
        idle_sleep = std::min(idle_sleep * 2, 1e-3);
      }
    }
  }
};

MpiTransport::MpiTransport(std::unique_ptr<State> state) : state_(std::move(state)) {}

collage::Result<std::unique_ptr<MpiTransport>> MpiTransport::start(int* argc, char*** argv, double heartbeat_seconds) {
  int provided = MPI_THREAD_SINGLE;
  if (MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS) {
    return collage::Error{collage::ErrorCode::io, "MPI_Init_thread failed"};
  }
  if (provided < MPI_THREAD_SERIALIZED) {
    MPI_Finalize();
    return collage::Error{collage::ErrorCode::io,
                          "the MPI library gives no thread support (MPI_THREAD_SERIALIZED), which the ranks need"};
  }
  auto state = std::make_unique<State>();
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_dup(MPI_COMM_WORLD, &state->comm);
  MPI_Comm_rank(state->comm, &state->rank);
  MPI_Comm_size(state->comm, &state->size);
  state->heartbeat_seconds = heartbeat_seconds;
  state->last_heard.assign(static_cast<std::size_t>(state->size), now_seconds());
  State* s = state.get();
  state->thread = std::thread([s] { s->run(); });
  return std::unique_ptr<MpiTransport>(new MpiTransport(std::move(state)));
}

MpiTransport::~MpiTransport() {
  if (!state_->ended) end(1, false);
}

int MpiTransport::rank() const { return state_->rank; }
int MpiTransport::size() const { return state_->size; }

void MpiTransport::send(int to, std::string bytes) {
  if (to < 0 || to >= state_->size || to == state_->rank || bytes.size() > static_cast<std::size_t>(INT_MAX)) return;
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->outbox.emplace_back(to, std::move(bytes));
}

std::optional<Envelope> MpiTransport::receive(double max_wait_seconds) {
  std::unique_lock<std::mutex> lock(state_->mutex);
  if (state_->inbox.empty() && max_wait_seconds > 0) {
    state_->arrived.wait_for(lock, std::chrono::duration<double>(max_wait_seconds),
                             [&] { return !state_->inbox.empty(); });
  }
  if (state_->inbox.empty()) return std::nullopt;
  Envelope e = std::move(state_->inbox.front());
  state_->inbox.pop_front();
  return e;
}

double MpiTransport::silence(int from) const {
  if (from < 0 || from >= state_->size) return 0;
  std::lock_guard<std::mutex> lock(state_->mutex);
  return now_seconds() - state_->last_heard[static_cast<std::size_t>(from)];
}

int MpiTransport::end(int status, bool clean, double flush_seconds) {
  if (state_->ended) return status;
  state_->ended = true;
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    state_->stopping = true;
    state_->flush_deadline = now_seconds() + flush_seconds;
  }
  state_->thread.join();
  if (clean && state_->flushed) {
    MPI_Comm_free(&state_->comm);
    MPI_Finalize();
    return status;
  }
  std::fflush(stdout);
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, status);
  std::_Exit(status);
}

#else

struct MpiTransport::State {
  bool ended = true;
};

MpiTransport::MpiTransport(std::unique_ptr<State> state) : state_(std::move(state)) {}

collage::Result<std::unique_ptr<MpiTransport>> MpiTransport::start(int*, char***, double) {
  return collage::Error{collage::ErrorCode::invalid_argument,
                        "this build has no MPI (libopenmpi-dev was not found when it was built)"};
}

MpiTransport::~MpiTransport() = default;
int MpiTransport::rank() const { return 0; }
int MpiTransport::size() const { return 1; }
void MpiTransport::send(int, std::string) {}
std::optional<Envelope> MpiTransport::receive(double) { return std::nullopt; }
double MpiTransport::silence(int) const { return 0; }
int MpiTransport::end(int status, bool, double) { return status; }

#endif

}  // namespace tc
