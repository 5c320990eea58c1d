#include "distributed/wire.hpp"

#include <cstring>

namespace tc {

namespace {

// Layout: kind (1 byte), seq (8), ok (1), cost state (1: 0 value, 1 invalid, 2 unknown), cost,
// spread (8 each, IEEE bits), samples (8), then text and host, each as its length (8) and bytes.
// Integers are little-endian.
constexpr std::size_t kFixed = 1 + 8 + 1 + 1 + 8 + 8 + 8;

void put_u64(std::string& out, std::uint64_t v) {
  for (int k = 0; k < 8; ++k, v >>= 8) out += static_cast<char>(v & 0xFF);
}

void put_double(std::string& out, double d) {
  std::uint64_t bits = 0;
  std::memcpy(&bits, &d, sizeof bits);
  put_u64(out, bits);
}

/// Reads fields off the front of a byte string.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : rest_(bytes) {}
  bool u8(std::uint8_t& v) {
    if (rest_.empty()) return false;
    v = static_cast<std::uint8_t>(rest_[0]);
    rest_.remove_prefix(1);
    return true;
  }
  bool u64(std::uint64_t& v) {
    if (rest_.size() < 8) return false;
    v = 0;
    for (int k = 7; k >= 0; --k) v = (v << 8) | static_cast<unsigned char>(rest_[static_cast<std::size_t>(k)]);
    rest_.remove_prefix(8);
    return true;
  }
  bool f64(double& d) {
    std::uint64_t bits = 0;
    if (!u64(bits)) return false;
    std::memcpy(&d, &bits, sizeof d);
    return true;
  }
  bool str(std::string& s) {
    std::uint64_t n = 0;
    if (!u64(n) || n > rest_.size()) return false;
    s.assign(rest_.data(), static_cast<std::size_t>(n));
    rest_.remove_prefix(static_cast<std::size_t>(n));
    return true;
  }
  bool done() const { return rest_.empty(); }

 private:
  std::string_view rest_;
};

}  // namespace

std::string encode(const Message& m) {
  std::string out;
  out.reserve(kFixed + 16 + m.text.size() + m.host.size());
  out += static_cast<char>(m.kind);
  put_u64(out, m.seq);
  out += static_cast<char>(m.ok ? 1 : 0);
  const collage::Cost cost = m.measurement.cost;
  out += static_cast<char>(cost.is_invalid() ? 1 : cost.is_unknown() ? 2 : 0);
  put_double(out, cost.is_known() ? cost.raw() : 0.0);
  put_double(out, m.measurement.spread);
  put_u64(out, static_cast<std::uint64_t>(m.measurement.samples));
  put_u64(out, m.text.size());
  out += m.text;
  put_u64(out, m.host.size());
  out += m.host;
  return out;
}

collage::Result<Message> decode(std::string_view bytes) {
  Reader in(bytes);
  Message m;
  std::uint8_t kind = 0;
  std::uint8_t ok = 0;
  std::uint8_t state = 0;
  double cost = 0;
  std::uint64_t samples = 0;
  if (!in.u8(kind) || !in.u64(m.seq) || !in.u8(ok) || !in.u8(state) || !in.f64(cost) ||
      !in.f64(m.measurement.spread) || !in.u64(samples) || !in.str(m.text) || !in.str(m.host) || !in.done()) {
    return collage::Error{collage::ErrorCode::parse,
                          "a message of " + std::to_string(bytes.size()) + " bytes that is not one of collage-run's"};
  }
  if (kind < static_cast<std::uint8_t>(MessageKind::setup) || kind > static_cast<std::uint8_t>(MessageKind::bye) ||
      ok > 1 || state > 2) {
    return collage::Error{collage::ErrorCode::parse, "a message of unknown kind " + std::to_string(kind)};
  }
  m.kind = static_cast<MessageKind>(kind);
  m.ok = ok == 1;
  m.measurement.cost = state == 1   ? collage::Cost::invalid()
                       : state == 2 ? collage::Cost::unknown()
                                    : collage::Cost::value(cost);
  m.measurement.samples = static_cast<std::size_t>(samples);
  return m;
}

Message answer_message(std::uint64_t seq, const collage::Result<collage::Measurement>& answer) {
  Message m;
  m.kind = MessageKind::answer;
  m.seq = seq;
  m.ok = answer.ok();
  if (answer.ok()) {
    m.measurement = *answer;
  } else {
    m.text = answer.error().message;
  }
  return m;
}

collage::Result<collage::Measurement> answer_of(const Message& m) {
  if (m.ok) return m.measurement;
  return collage::Error{collage::ErrorCode::oracle, m.text};
}

std::string pack(const std::vector<std::string>& fields) {
  std::string out;
  put_u64(out, fields.size());
  for (const std::string& f : fields) {
    put_u64(out, f.size());
    out += f;
  }
  return out;
}

collage::Result<std::vector<std::string>> unpack(std::string_view bytes) {
  Reader in(bytes);
  std::uint64_t n = 0;
  std::vector<std::string> fields;
  bool ok = in.u64(n) && n <= bytes.size();
  for (std::uint64_t k = 0; ok && k < n; ++k) {
    fields.emplace_back();
    ok = in.str(fields.back());
  }
  if (!ok || !in.done()) return collage::Error{collage::ErrorCode::parse, "a malformed list of fields"};
  return fields;
}

}  // namespace tc
