#include "distributed/cluster.hpp"

#include <algorithm>
#include <chrono>
#include <optional>
#include <set>
#include <utility>

#include <collage/support/numbers.hpp>

namespace tc {

namespace {

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string seconds_text(double s) { return collage::format_double(s, 3) + " s"; }

/// How long rank 0 waits for a message when it has nothing else to do.
constexpr double kPollSeconds = 0.05;

}  // namespace

struct Cluster::Batch {
  std::vector<std::optional<collage::Result<collage::Measurement>>> answers;
  /// Candidates not handed out yet, by index (the lowest goes first).
  std::set<std::size_t> pending;
  std::size_t done = 0;
  std::size_t elsewhere = 0;
  const std::vector<std::string>* records = nullptr;
  const ClusterOptions* options = nullptr;

  void settle(std::size_t index, collage::Result<collage::Measurement> answer) {
    answers[index] = std::move(answer);
    ++done;
    if (options->progress) options->progress("estimate", done, answers.size());
  }
};

Cluster::Cluster(Transport& transport, ClusterOptions options)
    : transport_(transport), options_(std::move(options)), ranks_(static_cast<std::size_t>(transport.size())) {
  ranks_[0].state = State::serving;
}

std::string Cluster::who(int r) const {
  const Rank& rank = ranks_[static_cast<std::size_t>(r)];
  return "rank " + std::to_string(r) + (rank.host.empty() ? "" : " (" + rank.host + ")");
}

void Cluster::leave_out(int r, const std::string& why) {
  ranks_[static_cast<std::size_t>(r)].state = State::left_out;
  if (options_.notify) options_.notify(who(r) + " left out: " + why);
}

void Cluster::give_up(int r, const std::string& why, Batch* batch) {
  Rank& rank = ranks_[static_cast<std::size_t>(r)];
  rank.state = State::lost;
  if (batch != nullptr && !rank.queue.empty()) {
    batch->settle(rank.queue.front().index,
                  collage::Error{collage::ErrorCode::oracle, who(r) + " was given up while measuring it: " + why});
    for (std::size_t k = 1; k < rank.queue.size(); ++k) batch->pending.insert(rank.queue[k].index);
  }
  rank.queue.clear();
  if (options_.notify) options_.notify(who(r) + " given up: " + why + "; its candidates go to the other ranks");
}

void Cluster::join(const std::string& setup, const std::string& identity) {
  Cluster& c = *this;
  Transport& transport = transport_;
  Message m;
  m.kind = MessageKind::setup;
  m.text = setup;
  const std::string bytes = encode(m);
  for (int r = 1; r < transport.size(); ++r) transport.send(r, bytes);
  const double deadline = now_seconds() + c.options_.setup_timeout_seconds;
  auto joining = [&] {
    return std::any_of(c.ranks_.begin(), c.ranks_.end(), [](const Rank& r) { return r.state == State::joining; });
  };
  while (joining()) {
    if (std::optional<Envelope> e = transport.receive(kPollSeconds)) {
      collage::Result<Message> got = decode(e->bytes);
      Rank& rank = c.ranks_[static_cast<std::size_t>(e->from)];
      if (!got.ok() || rank.state != State::joining) continue;
      rank.host = got->host;
      if (got->kind == MessageKind::ready && got->text == identity) {
        rank.state = State::serving;
      } else if (got->kind == MessageKind::ready) {
        c.leave_out(e->from, "it measures as '" + got->text + "', rank 0 as '" + identity + "'");
      } else if (got->kind == MessageKind::refuse) {
        c.leave_out(e->from, got->text);
      }
    }
    for (int r = 1; r < transport.size(); ++r) {
      if (c.ranks_[static_cast<std::size_t>(r)].state != State::joining) continue;
      if (const double s = transport.silence(r); s > c.options_.silence_timeout_seconds) {
        c.give_up(r, "nothing heard from it for " + seconds_text(s) + " while it joined", nullptr);
      } else if (now_seconds() > deadline) {
        c.give_up(r, "it did not join within " + seconds_text(c.options_.setup_timeout_seconds), nullptr);
      }
    }
  }
}

void Cluster::check_ranks(Batch* batch) {
  const double now = now_seconds();
  for (int r = 1; r < static_cast<int>(ranks_.size()); ++r) {
    Rank& rank = ranks_[static_cast<std::size_t>(r)];
    if (rank.state != State::serving) continue;
    if (const double s = transport_.silence(r); s > options_.silence_timeout_seconds) {
      give_up(r, "nothing heard from it for " + seconds_text(s) + " (dead, stuck or cut off)", batch);
    } else if (!rank.queue.empty()) {
      const double started = std::max(rank.queue.front().sent_at, rank.last_answer_at);
      if (now - started > options_.candidate_timeout_seconds) {
        give_up(r, "it spent over " + seconds_text(options_.candidate_timeout_seconds) + " on one candidate", batch);
      }
    }
  }
}

void Cluster::handle(const Envelope& envelope, Batch* batch) {
  collage::Result<Message> m = decode(envelope.bytes);
  if (!m.ok() || envelope.from <= 0 || envelope.from >= static_cast<int>(ranks_.size())) return;
  Rank& rank = ranks_[static_cast<std::size_t>(envelope.from)];
  if (m->kind == MessageKind::bye) {
    rank.said_bye = true;
    return;
  }
  // Answers of a rank given up, or of a batch that is over, are late: nothing waits for them.
  if (m->kind != MessageKind::answer || rank.state != State::serving || batch == nullptr) return;
  auto job = std::find_if(rank.queue.begin(), rank.queue.end(), [&](const Job& j) { return j.seq == m->seq; });
  if (job == rank.queue.end()) return;
  if (m->ok) ++batch->elsewhere;
  bytes_back_ += envelope.bytes.size();
  batch->settle(job->index, answer_of(*m));
  rank.queue.erase(job);
  rank.last_answer_at = now_seconds();
}

void Cluster::assign(Batch& batch) {
  for (int r = 1; r < static_cast<int>(ranks_.size()); ++r) {
    Rank& rank = ranks_[static_cast<std::size_t>(r)];
    while (rank.state == State::serving && rank.queue.size() < options_.queue_depth && !batch.pending.empty()) {
      const std::size_t index = *batch.pending.begin();
      batch.pending.erase(batch.pending.begin());
      Message m;
      m.kind = MessageKind::measure;
      m.seq = next_seq_++;
      m.text = (*batch.records)[index];
      std::string bytes = encode(m);
      ++sent_;
      bytes_out_ += bytes.size();
      transport_.send(r, std::move(bytes));
      rank.queue.push_back(Job{index, m.seq, now_seconds()});
    }
  }
}

BatchAnswers Cluster::measure(const std::vector<std::string>& records, const LocalMeasure& local) {
  Batch batch;
  batch.answers.resize(records.size());
  batch.records = &records;
  batch.options = &options_;
  for (std::size_t k = 0; k < records.size(); ++k) batch.pending.insert(batch.pending.end(), k);
  const double started = now_seconds();
  if (options_.progress) options_.progress("estimate", 0, records.size());
  while (batch.done < records.size()) {
    while (std::optional<Envelope> e = transport_.receive(0)) handle(*e, &batch);
    check_ranks(&batch);
    if (options_.max_seconds_per_batch > 0 && now_seconds() - started >= options_.max_seconds_per_batch) {
      for (std::size_t index : batch.pending) batch.settle(index, collage::Measurement{collage::Cost::unknown(), 0.0, 0});
      batch.pending.clear();
    }
    assign(batch);
    const bool others = std::any_of(ranks_.begin() + 1, ranks_.end(), [](const Rank& r) { return r.state == State::serving; });
    if (!batch.pending.empty() && (options_.measure_on_rank0 || !others)) {
      std::vector<std::size_t> taken;
      while (taken.size() < std::max<std::size_t>(options_.queue_depth, 1) && !batch.pending.empty()) {
        taken.push_back(*batch.pending.begin());
        batch.pending.erase(batch.pending.begin());
      }
      std::vector<collage::Result<collage::Measurement>> answers = local(taken);
      for (std::size_t k = 0; k < taken.size(); ++k) {
        batch.settle(taken[k], k < answers.size() ? std::move(answers[k])
                                                  : collage::Error{collage::ErrorCode::oracle, "rank 0 gave no answer"});
      }
      continue;
    }
    if (batch.done < records.size()) {
      if (std::optional<Envelope> e = transport_.receive(kPollSeconds)) handle(*e, &batch);
    }
  }
  BatchAnswers out;
  out.measured_elsewhere = batch.elsewhere;
  out.answers.reserve(records.size());
  for (auto& answer : batch.answers) out.answers.push_back(std::move(*answer));
  return out;
}

bool Cluster::finish(double wait_seconds) {
  Message stop;
  stop.kind = MessageKind::stop;
  const std::string bytes = encode(stop);
  // Ranks given up are told too: one that was only stuck may still hear it and end.
  for (int r = 1; r < static_cast<int>(ranks_.size()); ++r) transport_.send(r, bytes);
  const double deadline = now_seconds() + wait_seconds;
  auto waiting = [&] {
    for (int r = 1; r < static_cast<int>(ranks_.size()); ++r) {
      const Rank& rank = ranks_[static_cast<std::size_t>(r)];
      if (rank.state != State::lost && !rank.said_bye) return true;
    }
    return false;
  };
  while (waiting() && now_seconds() < deadline) {
    if (std::optional<Envelope> e = transport_.receive(kPollSeconds)) handle(*e, nullptr);
  }
  return !waiting() && lost().empty();
}

std::vector<int> Cluster::serving() const {
  std::vector<int> out;
  for (int r = 0; r < static_cast<int>(ranks_.size()); ++r) {
    if (ranks_[static_cast<std::size_t>(r)].state == State::serving) out.push_back(r);
  }
  return out;
}

std::vector<int> Cluster::lost() const {
  std::vector<int> out;
  for (int r = 0; r < static_cast<int>(ranks_.size()); ++r) {
    if (ranks_[static_cast<std::size_t>(r)].state == State::lost) out.push_back(r);
  }
  return out;
}

std::string Cluster::describe() const {
  auto list = [](const std::vector<int>& ranks) {
    std::string out;
    for (int r : ranks) out += (out.empty() ? "" : ", ") + std::to_string(r);
    return out;
  };
  std::vector<int> measuring = serving();
  if (!options_.measure_on_rank0 && measuring.size() > 1) measuring.erase(measuring.begin());
  std::string out = std::to_string(ranks_.size()) + " MPI ranks, measuring: " + list(measuring);
  std::vector<int> left;
  for (int r = 0; r < static_cast<int>(ranks_.size()); ++r) {
    if (ranks_[static_cast<std::size_t>(r)].state == State::left_out) left.push_back(r);
  }
  if (!left.empty()) out += "; left out: " + list(left);
  if (!lost().empty()) out += "; given up: " + list(lost());
  if (sent_ > 0) {
    auto kb = [](std::size_t bytes) { return collage::format_double(static_cast<double>(bytes) / 1000.0, 3) + " kB"; };
    out += "; " + std::to_string(sent_) + " candidates sent: " + kb(bytes_out_) + " out, " + kb(bytes_back_) + " back";
  }
  return out;
}

}  // namespace tc
