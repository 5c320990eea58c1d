#include "onnx/wire.hpp"

#include <cstdint>

namespace tc::detail {

namespace {

// Field numbers of onnx.proto.
constexpr std::uint64_t kModelGraph = 7;
constexpr std::uint64_t kGraphInitializer = 5;
constexpr std::uint64_t kTensorRawData = 9;
constexpr int kLengthDelimited = 2;

bool read_varint(std::string_view b, std::size_t& pos, std::uint64_t& v) {
  v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (pos >= b.size()) return false;
    const auto byte = static_cast<unsigned char>(b[pos++]);
    v |= std::uint64_t{byte & 0x7fu} << shift;
    if ((byte & 0x80u) == 0) return true;
  }
  return false;
}

void write_varint(std::string& out, std::uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

/// One field of a message: its number, wire type, its bytes (tag included) and, when
/// length-delimited, its payload.
struct Field {
  std::uint64_t number = 0;
  int type = 0;
  std::string_view whole;
  std::string_view payload;
};

/// The field at `pos` of `b`, advancing `pos`; false when the bytes do not hold one.
bool next_field(std::string_view b, std::size_t& pos, Field& f) {
  const std::size_t start = pos;
  std::uint64_t tag = 0;
  if (!read_varint(b, pos, tag)) return false;
  f.number = tag >> 3;
  f.type = static_cast<int>(tag & 7);
  f.payload = {};
  std::uint64_t value = 0;
  switch (f.type) {
    case 0:
      if (!read_varint(b, pos, value)) return false;
      break;
    case 1:
    case 5: {
      const std::size_t size = f.type == 1 ? 8 : 4;
      if (b.size() - pos < size) return false;
      pos += size;
      break;
    }
    case kLengthDelimited:
      if (!read_varint(b, pos, value) || value > b.size() - pos) return false;
      f.payload = b.substr(pos, static_cast<std::size_t>(value));
      pos += static_cast<std::size_t>(value);
      break;
    default: return false;  // groups, which onnx.proto does not use
  }
  f.whole = b.substr(start, pos - start);
  return true;
}

void write_submessage(std::string& out, std::uint64_t number, const std::string& content) {
  write_varint(out, (number << 3) | kLengthDelimited);
  write_varint(out, content.size());
  out += content;
}

/// Copies `message`'s fields to `out`, giving the length-delimited fields number `number` to
/// `rewrite` (which appends the new payload); false on malformed bytes.
template <class Rewrite>
bool copy_fields(std::string_view message, std::uint64_t number, std::string& out, Rewrite rewrite) {
  std::size_t pos = 0;
  Field f;
  while (pos < message.size()) {
    if (!next_field(message, pos, f)) return false;
    if (f.number == number && f.type == kLengthDelimited) {
      std::string content;
      if (!rewrite(f.payload, content)) return false;
      write_submessage(out, number, content);
    } else {
      out.append(f.whole.data(), f.whole.size());
    }
  }
  return true;
}

}  // namespace

std::optional<StrippedModel> strip_initializer_data(std::string_view model) {
  StrippedModel stripped;
  stripped.bytes.reserve(model.size() < (std::size_t{1} << 20) ? model.size() : std::size_t{1} << 20);
  const auto strip_tensor = [&](std::string_view tensor, std::string& out) {
    std::optional<std::string_view> raw;
    std::size_t pos = 0;
    Field f;
    while (pos < tensor.size()) {
      if (!next_field(tensor, pos, f)) return false;
      if (f.number == kTensorRawData && f.type == kLengthDelimited) {
        raw = f.payload;  // protobuf keeps the last of repeated scalar fields
      } else {
        out.append(f.whole.data(), f.whole.size());
      }
    }
    stripped.raw_data.push_back(raw);
    return true;
  };
  const auto strip_graph = [&](std::string_view graph, std::string& out) {
    return copy_fields(graph, kGraphInitializer, out, strip_tensor);
  };
  if (!copy_fields(model, kModelGraph, stripped.bytes, strip_graph)) return std::nullopt;
  return stripped;
}

}  // namespace tc::detail
