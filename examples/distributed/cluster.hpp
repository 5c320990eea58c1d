#pragma once

/// \file
/// Cluster: rank 0's side of a distributed measurement. It hands the candidates of a batch to the
/// serving ranks by index (each rank takes the next one as it has room), measures on rank 0 too
/// while they are all busy, and puts every answer back at its candidate's index, so the answers
/// are the same whatever the number of ranks (up to measurement noise). A rank that stops
/// answering or spends too long on a candidate is given up: the candidate it was measuring is an
/// Error naming the rank and why (so Invalid in the search), the ones it held but had not started
/// go to the other ranks, and rank 0 never waits for it again.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <collage/cost/budgeted_oracle.hpp>
#include <collage/cost/cost_oracle.hpp>

#include "distributed/transport.hpp"
#include "distributed/wire.hpp"

namespace tc {

/// How rank 0 spreads the work and when it gives a rank up.
struct ClusterOptions {
  /// Seconds a rank may take to join (read the model, open its devices) once the setup is sent.
  double setup_timeout_seconds = 300;
  /// Seconds a rank may spend on one candidate before it counts as stuck.
  double candidate_timeout_seconds = 300;
  /// Seconds without a word from a rank (heartbeats included) after which it counts as lost.
  double silence_timeout_seconds = 10;
  /// Candidates a rank holds at once. A rank measures those it holds together, as one process
  /// measures a batch (the measuring oracle times CPU candidates in turns), and rank 0 takes as
  /// many at a time when it measures.
  std::size_t queue_depth = 8;
  /// Whether rank 0 measures too (the next candidates, while every serving rank's queue is full).
  /// It always does when no rank serves.
  bool measure_on_rank0 = true;
  /// Seconds of measuring per batch after which the candidates not yet handed out are answered
  /// Unknown (0 samples), as a spent budget is; 0 for no limit.
  double max_seconds_per_batch = 0;
  /// Told ("estimate", answered, batch size) as answers come in.
  collage::ProgressCallback progress;
  /// Told one line whenever a rank is left out or given up.
  std::function<void(const std::string&)> notify;
};

/// The answers of one batch.
struct BatchAnswers {
  /// One per record, in order.
  std::vector<collage::Result<collage::Measurement>> answers;
  /// How many of them other ranks measured (their measurements, not their errors).
  std::size_t measured_elsewhere = 0;
};

/// Rank 0's view of the ranks that measure for it. Not thread-safe.
class Cluster {
 public:
  /// Rank 0 of `transport` (borrowed), the other ranks not joined yet: until join(), rank 0
  /// measures alone.
  Cluster(Transport& transport, ClusterOptions options);

  /// Sends `setup` to every other rank and waits (up to setup_timeout_seconds) until each has
  /// joined or is left out: a rank that measures under another identity than `identity` (other
  /// hardware, another version) or refuses the setup is left out, one that stays silent or does not
  /// join in time is given up; each with a note.
  void join(const std::string& setup, const std::string& identity);

  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;

  /// Measures the candidates of `records` at these indices on rank 0, together: one answer each,
  /// in order.
  using LocalMeasure = std::function<std::vector<collage::Result<collage::Measurement>>(const std::vector<std::size_t>&)>;

  /// Answers for `records` (candidates as trace records), in order, measured by the serving ranks
  /// and by `local` on rank 0.
  BatchAnswers measure(const std::vector<std::string>& records, const LocalMeasure& local);

  /// Tells every rank to stop (joined or not) and waits up to `wait_seconds` for each to say it has. True when
  /// every rank did and none was given up: only then may the job end cleanly (MPI_Finalize waits
  /// for every rank, forever for a stuck one).
  bool finish(double wait_seconds = 5);

  /// The ranks measuring for rank 0 now.
  std::vector<int> serving() const;
  /// The ranks given up.
  std::vector<int> lost() const;
  /// "4 MPI ranks, measuring: 0, 1, 2, 3; 120 candidates sent: 14.2 kB out, 5.2 kB back" (with
  /// the ranks left out and given up).
  std::string describe() const;
  /// The options, e.g. to set the progress callback.
  ClusterOptions& options() { return options_; }

 private:
  enum class State { joining, serving, left_out, lost };
  struct Job {
    std::size_t index;
    std::uint64_t seq;
    double sent_at;
  };
  struct Rank {
    State state = State::joining;
    std::string host;
    std::deque<Job> queue;
    double last_answer_at = 0;
    bool said_bye = false;
  };
  /// The state of one batch.
  struct Batch;

  std::string who(int r) const;
  void leave_out(int r, const std::string& why);
  /// Gives rank `r` up: the candidate it measures fails with `why`, the rest go back to pending.
  void give_up(int r, const std::string& why, Batch* batch);
  void check_ranks(Batch* batch);
  void handle(const Envelope& envelope, Batch* batch);
  void assign(Batch& batch);

  Transport& transport_;
  ClusterOptions options_;
  std::vector<Rank> ranks_;
  std::uint64_t next_seq_ = 1;
  std::size_t sent_ = 0;
  std::size_t bytes_out_ = 0;
  std::size_t bytes_back_ = 0;
};

}  // namespace tc
