#include "support/Npz.h"

#include "support/Float16.h"
#include "support/ReadFile.h"

#include <algorithm>

#include <zip.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>

namespace tpu {
namespace {

// Text from a file, safe for a one-line message: control and non-ASCII
// bytes become \xNN, and it is cut at 64 characters.
std::string printable(const std::string &text) {
  std::string out;
  for (unsigned char c : text.substr(0, 64)) {
    if (c >= 0x20 && c < 0x7f) {
      out.push_back(static_cast<char>(c));
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  if (text.size() > 64) out += "...";
  return out;
}

struct DtypeInfo {
  const char *name;
  const char *descr; // numpy descr as written in little-endian files
  size_t size;
};

// One table: numpy name, descr, element size.
constexpr DtypeInfo kDtypes[] = {
    {"float32", "<f4", 4},
    {"float64", "<f8", 8},
    {"int8", "|i1", 1},
    {"uint8", "|u1", 1},
    {"int16", "<i2", 2},
    {"uint16", "<u2", 2},
    {"int32", "<i4", 4},
    {"int64", "<i8", 8},
    {"bool", "|b1", 1},
    // 16-bit floats, stored only (the Tpu module's F16/BF16 weights): numpy has no bfloat16, so its
    // elements are raw 2-byte values ("V2"), as ml_dtypes writes them.
    {"float16", "<f2", 2},
    {"bfloat16", "|V2", 2},
};

const DtypeInfo *findDtype(const std::string &name) {
  for (const auto &d : kDtypes)
    if (name == d.name) return &d;
  return nullptr;
}

// Maps a descr from a header to a dtype; "<", "|" and "=" are accepted for
// little-endian data, ">" is reported as unsupported.
Result<const DtypeInfo *> dtypeFromDescr(const std::string &descr) {
  if (descr.size() < 2) return makeError("unrecognised dtype '", printable(descr), "'");
  char order = descr[0];
  std::string kind = descr.substr(1);
  if (order == '>' && kind != "i1" && kind != "u1" && kind != "b1")
    return makeError("big-endian dtype '", printable(descr), "' is not supported (little-endian only)");
  if (order != '<' && order != '|' && order != '=' && order != '>')
    return makeError("unrecognised dtype '", printable(descr), "'");
  for (const auto &d : kDtypes)
    if (kind == std::string(d.descr + 1)) return &d;
  return makeError("unsupported dtype '", printable(descr),
                   "' (supported: float32 float64 int8 uint8 int16 uint16 int32 int64 bool float16 bfloat16)");
}

// A minimal reader for the Python dict literal in the header:
// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
class HeaderParser {
public:
  explicit HeaderParser(const std::string &text) : s_(text) {}

  Status parse(std::string &descr, bool &fortran, std::vector<int64_t> &shape) {
    bool haveDescr = false, haveFortran = false, haveShape = false;
    skipSpace();
    if (!eat('{')) return makeError("header is not a dict");
    while (true) {
      skipSpace();
      if (eat('}')) break;
      std::string key;
      if (!readString(key)) return makeError("header: expected a quoted key at offset ", pos_);
      skipSpace();
      if (!eat(':')) return makeError("header: expected ':' after '", printable(key), "'");
      skipSpace();
      if (key == "descr") {
        if (!readString(descr)) return makeError("header: 'descr' is not a string");
        haveDescr = true;
      } else if (key == "fortran_order") {
        if (s_.compare(pos_, 4, "True") == 0) {
          fortran = true;
          pos_ += 4;
        } else if (s_.compare(pos_, 5, "False") == 0) {
          fortran = false;
          pos_ += 5;
        } else {
          return makeError("header: 'fortran_order' is not True/False");
        }
        haveFortran = true;
      } else if (key == "shape") {
        TPU_RETURN_IF_ERROR(readShape(shape));
        haveShape = true;
      } else {
        return makeError("header: unexpected key '", printable(key), "'");
      }
      skipSpace();
      if (eat(',')) continue;
      skipSpace();
      if (eat('}')) break;
      return makeError("header: expected ',' or '}' at offset ", pos_);
    }
    if (!haveDescr || !haveFortran || !haveShape)
      return makeError("header lacks ", !haveDescr ? "'descr'" : !haveFortran ? "'fortran_order'" : "'shape'");
    return Status::ok();
  }

private:
  void skipSpace() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\t')) ++pos_;
  }
  bool eat(char c) {
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool readString(std::string &out) {
    if (pos_ >= s_.size() || (s_[pos_] != '\'' && s_[pos_] != '"')) return false;
    char q = s_[pos_++];
    size_t end = s_.find(q, pos_);
    if (end == std::string::npos) return false;
    out = s_.substr(pos_, end - pos_);
    pos_ = end + 1;
    return true;
  }
  Status readShape(std::vector<int64_t> &shape) {
    shape.clear();
    if (!eat('(')) return makeError("header: 'shape' is not a tuple");
    while (true) {
      skipSpace();
      if (eat(')')) return Status::ok();
      if (pos_ >= s_.size() || !isdigit(static_cast<unsigned char>(s_[pos_])))
        return makeError("header: bad dimension in 'shape' at offset ", pos_);
      uint64_t v = 0;
      while (pos_ < s_.size() && isdigit(static_cast<unsigned char>(s_[pos_]))) {
        v = v * 10 + (s_[pos_++] - '0');
        if (v > kMaxNpyBytes) return makeError("header: dimension in 'shape' is too large");
      }
      // Python writes 3L for longs in old files.
      eat('L');
      shape.push_back(static_cast<int64_t>(v));
      if (shape.size() > 32) return makeError("header: more than 32 dimensions");
      skipSpace();
      if (eat(',')) continue;
      skipSpace();
      if (eat(')')) return Status::ok();
      return makeError("header: expected ',' or ')' in 'shape'");
    }
  }

  const std::string &s_;
  size_t pos_ = 0;
};

} // namespace

size_t dtypeSize(const std::string &dtype) {
  const DtypeInfo *d = findDtype(dtype);
  return d ? d->size : 0;
}

std::string shapeToString(const std::vector<int64_t> &shape) {
  if (shape.empty()) return "scalar";
  std::ostringstream os;
  for (size_t i = 0; i < shape.size(); ++i) os << (i ? "x" : "") << shape[i];
  return os.str();
}

NpyArray NpyArray::fromBytes(std::string dtype, std::vector<int64_t> shape, const void *bytes,
                             size_t size) {
  NpyArray a;
  a.dtype = std::move(dtype);
  a.shape = std::move(shape);
  const uint8_t *p = static_cast<const uint8_t *>(bytes);
  if (size) a.data.assign(p, p + size);
  return a;
}

std::vector<float> NpyArray::toFloat() const {
  int64_t n = numel();
  std::vector<float> out(n);
  auto convert = [&](auto tag) {
    using T = decltype(tag);
    const T *p = as<T>();
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(p[i]);
  };
  if (dtype == "float32") convert(float());
  else if (dtype == "float64") convert(double());
  else if (dtype == "int8") convert(int8_t());
  else if (dtype == "uint8") convert(uint8_t());
  else if (dtype == "int16") convert(int16_t());
  else if (dtype == "uint16") convert(uint16_t());
  else if (dtype == "int32") convert(int32_t());
  else if (dtype == "int64") convert(int64_t());
  else if (dtype == "bool") {
    for (int64_t i = 0; i < n; ++i) out[i] = data[i] ? 1.0f : 0.0f;
  } else if (dtype == "float16" || dtype == "bfloat16") {
    const uint16_t *p = as<uint16_t>();
    for (int64_t i = 0; i < n; ++i) out[i] = dtype == "float16" ? f16ToFloat(p[i]) : bf16ToFloat(p[i]);
  }
  return out;
}

Result<NpyArray> parseNpy(const uint8_t *bytes, size_t size, const std::string &where) {
  auto err = [&](const Status &s) { return Status::error(where + ": " + s.message()); };
  static const char kMagic[] = "\x93NUMPY";
  if (size < 10 || std::memcmp(bytes, kMagic, 6) != 0)
    return err(makeError("not a .npy file (bad magic)"));
  uint8_t major = bytes[6];
  size_t headerLen, headerStart;
  if (major == 1) {
    headerLen = bytes[8] | (bytes[9] << 8);
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (size < 12) return err(makeError("truncated .npy header"));
    headerLen = static_cast<size_t>(bytes[8]) | (static_cast<size_t>(bytes[9]) << 8) |
                (static_cast<size_t>(bytes[10]) << 16) | (static_cast<size_t>(bytes[11]) << 24);
    headerStart = 12;
  } else {
    return err(makeError("unsupported .npy format version ", int(major)));
  }
  if (headerLen > size - headerStart)
    return err(makeError("header length ", headerLen, " exceeds the file size ", size));
  std::string header(reinterpret_cast<const char *>(bytes + headerStart), headerLen);
  std::string descr;
  bool fortran = false;
  NpyArray a;
  if (Status s = HeaderParser(header).parse(descr, fortran, a.shape); !s) return err(s);
  if (fortran)
    return err(makeError("fortran_order=True arrays are not supported (save with C order, "
                         "e.g. np.ascontiguousarray)"));
  auto dt = dtypeFromDescr(descr);
  if (!dt) return err(dt.status());
  a.dtype = (*dt)->name;
  // Overflow-safe element count: every partial product stays under the limit.
  uint64_t count = 1;
  for (int64_t d : a.shape) {
    if (d != 0 && count > kMaxNpyBytes / static_cast<uint64_t>(d))
      return err(makeError("shape ", shapeToString(a.shape), " is absurdly large"));
    count *= static_cast<uint64_t>(d);
  }
  uint64_t want = count * (*dt)->size;
  if (want > kMaxNpyBytes)
    return err(makeError("shape ", shapeToString(a.shape), " is absurdly large"));
  size_t have = size - headerStart - headerLen;
  if (have != want)
    return err(makeError("data is ", have, " bytes but shape ", shapeToString(a.shape), " of ",
                         a.dtype, " needs ", want));
  a.data.assign(bytes + headerStart + headerLen, bytes + size);
  return a;
}

std::vector<uint8_t> serializeNpy(const NpyArray &array) {
  const DtypeInfo *d = findDtype(array.dtype);
  std::ostringstream h;
  h << "{'descr': '" << (d ? d->descr : "|u1") << "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < array.shape.size(); ++i) h << (i ? ", " : "") << array.shape[i];
  if (array.shape.size() == 1) h << ",";
  h << "), }";
  std::string header = h.str();
  // Pad with spaces and a newline so the data starts on a 64-byte boundary.
  bool v2 = header.size() + 11 > 65535;
  size_t prefix = v2 ? 12 : 10;
  size_t total = prefix + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');
  size_t len = header.size();
  std::vector<uint8_t> out(prefix + len + array.data.size());
  std::memcpy(out.data(), "\x93NUMPY", 6);
  out[6] = v2 ? 2 : 1;
  out[7] = 0;
  for (size_t i = 0; i < prefix - 8; ++i) out[8 + i] = (len >> (8 * i)) & 0xff;
  std::memcpy(out.data() + prefix, header.data(), len);
  if (!array.data.empty()) std::memcpy(out.data() + prefix + len, array.data.data(), array.data.size());
  return out;
}

static Status checkWritable(const NpyArray &array, const std::string &where) {
  size_t es = dtypeSize(array.dtype);
  if (es == 0) return makeError(where, ": unknown dtype '", array.dtype, "'");
  if (array.data.size() != static_cast<uint64_t>(array.numel()) * es)
    return makeError(where, ": data is ", array.data.size(), " bytes but shape ",
                     shapeToString(array.shape), " needs ", array.numel() * es);
  return Status::ok();
}

Result<NpyArray> readNpy(const std::string &path) {
  auto size = fileSize(path, "file");
  if (!size) return size.status();
  if (*size > kMaxNpyBytes + 65536) return makeError(path, ": file is too large for a .npy array");
  auto bytes = readFile(path, "file");
  if (!bytes) return bytes.status();
  return parseNpy(reinterpret_cast<const uint8_t *>(bytes->data()), bytes->size(), path);
}

Status writeNpy(const std::string &path, const NpyArray &array) {
  TPU_RETURN_IF_ERROR(checkWritable(array, path));
  std::vector<uint8_t> bytes = serializeNpy(array);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return makeError(path, ": cannot create file");
  out.write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
  if (!out) return makeError(path, ": write failed");
  return Status::ok();
}

namespace {
struct ZipCloser {
  void operator()(zip_t *z) const { zip_discard(z); }
};
struct ZipFileCloser {
  void operator()(zip_file_t *f) const { zip_fclose(f); }
};
} // namespace

Result<NpzMap> readNpz(const std::string &path) {
  int errorCode = 0;
  std::unique_ptr<zip_t, ZipCloser> zip(zip_open(path.c_str(), ZIP_RDONLY | ZIP_CHECKCONS, &errorCode));
  if (!zip) {
    zip_error_t ze;
    zip_error_init_with_code(&ze, errorCode);
    std::string msg = zip_error_strerror(&ze);
    zip_error_fini(&ze);
    if (errorCode == ZIP_ER_NOENT || errorCode == ZIP_ER_OPEN)
      return makeError(path, ": cannot open file");
    return makeError(path, ": not a valid .npz (zip) file: ", msg);
  }
  NpzMap result;
  zip_int64_t n = zip_get_num_entries(zip.get(), 0);
  for (zip_int64_t i = 0; i < n; ++i) {
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat_index(zip.get(), i, 0, &st) != 0 || !(st.valid & ZIP_STAT_NAME) ||
        !(st.valid & ZIP_STAT_SIZE))
      return makeError(path, ": member ", i, ": cannot read its zip entry");
    std::string member = st.name;
    std::string name = member;
    if (name.size() > 4 && name.compare(name.size() - 4, 4, ".npy") == 0)
      name.resize(name.size() - 4);
    std::string where = path + ": member '" + printable(name) + "'";
    if (!member.empty() && member.back() == '/') continue; // directory entry
    if (st.size > kMaxNpyBytes + 65536)
      return makeError(where, ": declared size ", st.size, " is absurdly large");
    if (result.count(name)) return makeError(where, ": appears twice");
    std::unique_ptr<zip_file_t, ZipFileCloser> f(zip_fopen_index(zip.get(), i, 0));
    if (!f) return makeError(where, ": cannot open: ", zip_strerror(zip.get()));
    // The buffer grows with the data actually inflated, not with the size the
    // entry declares: a small archive may claim gigabytes.
    std::vector<uint8_t> bytes;
    zip_uint64_t got = 0;
    while (got < st.size) {
      if (got == bytes.size()) // full: grow by doubling, at least 1 MiB, at most to the declared size
        bytes.resize(got + std::min<zip_uint64_t>(st.size - got, std::max<zip_uint64_t>(got, 1 << 20)));
      zip_int64_t r = zip_fread(f.get(), bytes.data() + got, bytes.size() - got);
      if (r < 0) return makeError(where, ": corrupt data: ", zip_file_strerror(f.get()));
      if (r == 0) break;
      got += static_cast<zip_uint64_t>(r);
    }
    bytes.resize(got);
    if (got != st.size)
      return makeError(where, ": truncated (", got, " of ", st.size, " bytes)");
    auto arr = parseNpy(bytes.data(), bytes.size(), where);
    if (!arr) return arr.status();
    result.emplace(name, arr.take());
  }
  return result;
}

Status writeNpz(const std::string &path, const NpzMap &arrays, bool compress) {
  for (const auto &[name, array] : arrays)
    TPU_RETURN_IF_ERROR(checkWritable(array, path + ": member '" + name + "'"));
  if (arrays.empty()) {
    // libzip writes nothing for an empty archive; numpy writes an empty zip
    // (just the end-of-central-directory record).
    static const uint8_t kEmptyZip[22] = {0x50, 0x4b, 0x05, 0x06};
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char *>(kEmptyZip), sizeof(kEmptyZip));
    return out ? Status::ok() : makeError(path, ": cannot create file");
  }
  int errorCode = 0;
  std::unique_ptr<zip_t, ZipCloser> zip(zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &errorCode));
  if (!zip) return makeError(path, ": cannot create file");
  // libzip reads the buffers at zip_close, so they live until then.
  std::vector<std::vector<uint8_t>> images;
  images.reserve(arrays.size());
  for (const auto &[name, array] : arrays) {
    images.push_back(serializeNpy(array));
    const auto &img = images.back();
    zip_source_t *src = zip_source_buffer(zip.get(), img.data(), img.size(), 0);
    if (!src) return makeError(path, ": member '", name, "': ", zip_strerror(zip.get()));
    zip_int64_t idx = zip_file_add(zip.get(), (name + ".npy").c_str(), src, ZIP_FL_ENC_UTF_8);
    if (idx < 0) {
      zip_source_free(src);
      return makeError(path, ": member '", name, "': ", zip_strerror(zip.get()));
    }
    zip_set_file_compression(zip.get(), idx, compress ? ZIP_CM_DEFLATE : ZIP_CM_STORE, 0);
    // 1980-01-01: a fixed timestamp keeps the output deterministic.
    zip_file_set_dostime(zip.get(), idx, 0, (0 << 9) | (1 << 5) | 1, 0);
  }
  zip_t *raw = zip.release();
  if (zip_close(raw) != 0) {
    std::string msg = zip_strerror(raw);
    zip_discard(raw);
    return makeError(path, ": write failed: ", msg);
  }
  return Status::ok();
}

} // namespace tpu
