#include "compiler/Preprocess/Preprocess.h"

#include "support/ReadFile.h"

#include <stb/stb_image.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <sstream>

namespace tpu::preprocess {

const char *pixelFormatName(PixelFormat f) {
  switch (f) {
  case PixelFormat::Rgb: return "rgb";
  case PixelFormat::Bgr: return "bgr";
  case PixelFormat::Gray: return "gray";
  }
  return "?";
}

const char *channelFormatName(ChannelFormat f) { return f == ChannelFormat::Nchw ? "nchw" : "nhwc"; }

bool ConfigText::empty() const {
  return mean.empty() && scale.empty() && pixelFormat.empty() && channelFormat.empty() && resizeDims.empty() &&
         !keepAspectRatio;
}

namespace {

Result<std::vector<double>> parseNumbers(const std::string &flag, const std::string &text) {
  std::vector<double> out;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) {
    const char *begin = item.c_str();
    char *end = nullptr;
    double v = std::strtod(begin, &end);
    while (end && std::isspace(static_cast<unsigned char>(*end))) ++end;
    if (end == begin || *end != '\0' || !std::isfinite(v))
      return makeError(flag, " '", text, "': '", item, "' is not a finite number");
    out.push_back(v);
  }
  if (out.empty()) return makeError(flag, " '", text, "': expected numbers separated by commas");
  return out;
}

} // namespace

Result<Config> parseConfig(const ConfigText &text) {
  Config c;
  if (!text.mean.empty()) {
    auto v = parseNumbers("--mean", text.mean);
    if (!v) return v.status();
    c.mean = v.take();
  }
  if (!text.scale.empty()) {
    auto v = parseNumbers("--scale", text.scale);
    if (!v) return v.status();
    c.scale = v.take();
  }
  if (!text.pixelFormat.empty()) {
    if (text.pixelFormat == "rgb") c.pixelFormat = PixelFormat::Rgb;
    else if (text.pixelFormat == "bgr") c.pixelFormat = PixelFormat::Bgr;
    else if (text.pixelFormat == "gray") c.pixelFormat = PixelFormat::Gray;
    else return makeError("--pixel-format '", text.pixelFormat, "' is not one of rgb, bgr, gray");
  }
  if (!text.channelFormat.empty()) {
    if (text.channelFormat == "nchw") c.channelFormat = ChannelFormat::Nchw;
    else if (text.channelFormat == "nhwc") c.channelFormat = ChannelFormat::Nhwc;
    else return makeError("--channel-format '", text.channelFormat, "' is not one of nchw, nhwc");
  }
  if (!text.resizeDims.empty()) {
    auto v = parseNumbers("--resize-dims", text.resizeDims);
    if (!v) return v.status();
    if (v->size() != 2) return makeError("--resize-dims '", text.resizeDims, "': expected h,w");
    for (double d : *v)
      if (d < 1 || d > 65536 || d != std::floor(d))
        return makeError("--resize-dims '", text.resizeDims, "': dimensions must be integers in [1, 65536]");
    c.resizeDims = {int64_t((*v)[0]), int64_t((*v)[1])};
  }
  c.keepAspectRatio = text.keepAspectRatio;
  return c;
}

bool isImageFile(const std::string &path) {
  std::string lower = path;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char ch) { return char(std::tolower(ch)); });
  for (const char *ext : {".png", ".jpg", ".jpeg", ".bmp"}) {
    size_t n = std::char_traits<char>::length(ext);
    if (lower.size() > n && lower.compare(lower.size() - n, n, ext) == 0) return true;
  }
  return false;
}

Result<Image> decodeImageFile(const std::string &path) {
  auto file = readFile(path, "image");
  if (!file) return file.status();
  const auto *bytes = reinterpret_cast<const stbi_uc *>(file->data());
  const size_t size = file->size();
  if (size == 0) return makeError(path, ": empty file, not an image");
  if (size > size_t(1) << 30) return makeError(path, ": image file over 1 GiB");
  int w = 0, h = 0, comp = 0;
  if (!stbi_info_from_memory(bytes, int(size), &w, &h, &comp))
    return makeError(path, ": not a decodable image (", stbi_failure_reason(), ")");
  // Bounded before decoding: the decoder allocates w * h * comp bytes.
  if (int64_t(w) * h > (int64_t(1) << 28)) return makeError(path, ": image of ", w, "x", h, " pixels is too large");
  stbi_uc *data = stbi_load_from_memory(bytes, int(size), &w, &h, &comp, 0);
  if (!data) return makeError(path, ": corrupt image (", stbi_failure_reason(), ")");
  Image img;
  img.height = h;
  img.width = w;
  // Alpha is dropped: gray+alpha -> gray, RGBA -> RGB.
  img.channels = comp >= 3 ? 3 : 1;
  img.pixels.resize(size_t(h) * size_t(w) * size_t(img.channels));
  for (int64_t p = 0; p < int64_t(h) * w; ++p)
    for (int64_t c = 0; c < img.channels; ++c) img.pixels[size_t(p * img.channels + c)] = data[p * comp + c];
  stbi_image_free(data);
  return img;
}

namespace {

// The image's pixels as the pixel format's channels (double), HWC.
std::vector<double> toPixelFormat(const Image &img, PixelFormat format) {
  const int64_t n = img.height * img.width;
  const int64_t outC = format == PixelFormat::Gray ? 1 : 3;
  std::vector<double> out(size_t(n * outC));
  for (int64_t p = 0; p < n; ++p) {
    const uint8_t *px = &img.pixels[size_t(p * img.channels)];
    if (format == PixelFormat::Gray) {
      uint32_t l = img.channels == 1 ? px[0] : (px[0] * 19595u + px[1] * 38470u + px[2] * 7471u + 0x8000u) >> 16;
      out[size_t(p)] = double(l);
      continue;
    }
    for (int64_t c = 0; c < 3; ++c) {
      int64_t src = img.channels == 1 ? 0 : format == PixelFormat::Bgr ? 2 - c : c;
      out[size_t(p * 3 + c)] = double(px[src]);
    }
  }
  return out;
}

// Source sample positions of one axis for the half-pixel bilinear resize.
struct Taps {
  std::vector<int64_t> lo, hi;
  std::vector<double> frac;
};

Taps axisTaps(int64_t in, int64_t out) {
  Taps t;
  const double ratio = double(in) / double(out);
  for (int64_t d = 0; d < out; ++d) {
    double s = (double(d) + 0.5) * ratio - 0.5;
    if (s < 0) s = 0;
    int64_t lo = std::min(int64_t(std::floor(s)), in - 1);
    t.lo.push_back(lo);
    t.hi.push_back(std::min(lo + 1, in - 1));
    t.frac.push_back(s - double(lo));
  }
  return t;
}

// Bilinear resize of an HWC double image.
std::vector<double> resize(const std::vector<double> &src, int64_t h, int64_t w, int64_t c, int64_t oh, int64_t ow) {
  Taps ty = axisTaps(h, oh), tx = axisTaps(w, ow);
  std::vector<double> out(size_t(oh * ow * c));
  auto at = [&](int64_t y, int64_t x, int64_t k) { return src[size_t((y * w + x) * c + k)]; };
  for (int64_t y = 0; y < oh; ++y)
    for (int64_t x = 0; x < ow; ++x)
      for (int64_t k = 0; k < c; ++k) {
        const double fx = tx.frac[size_t(x)], fy = ty.frac[size_t(y)];
        double top = at(ty.lo[size_t(y)], tx.lo[size_t(x)], k) * (1 - fx) + at(ty.lo[size_t(y)], tx.hi[size_t(x)], k) * fx;
        double bot = at(ty.hi[size_t(y)], tx.lo[size_t(x)], k) * (1 - fx) + at(ty.hi[size_t(y)], tx.hi[size_t(x)], k) * fx;
        out[size_t((y * ow + x) * c + k)] = top * (1 - fy) + bot * fy;
      }
  return out;
}

Result<std::vector<double>> perChannel(const char *flag, const std::vector<double> &values, int64_t channels,
                                       double dflt) {
  if (values.empty()) return std::vector<double>(size_t(channels), dflt);
  if (values.size() == 1) return std::vector<double>(size_t(channels), values[0]);
  if (int64_t(values.size()) != channels)
    return makeError(flag, " has ", values.size(), " values but the input has ", channels, " channels");
  return values;
}

} // namespace

Result<NpyArray> imageToTensor(const Image &image, const Config &config, const std::vector<int64_t> &shape) {
  if (shape.size() != 4) return makeError("image input needs a rank-4 tensor, the model input is ", shapeToString(shape));
  const bool nchw = config.channelFormat == ChannelFormat::Nchw;
  const int64_t n = shape[0], c = nchw ? shape[1] : shape[3], h = nchw ? shape[2] : shape[1],
                w = nchw ? shape[3] : shape[2];
  const int64_t formatChannels = config.pixelFormat == PixelFormat::Gray ? 1 : 3;
  if (c != formatChannels)
    return makeError("the model input ", shapeToString(shape), " (", channelFormatName(config.channelFormat), ") has ",
                     c, " channel(s) but pixel format ", pixelFormatName(config.pixelFormat), " gives ",
                     formatChannels);
  auto mean = perChannel("--mean", config.mean, c, 0.0);
  if (!mean) return mean.status();
  auto scale = perChannel("--scale", config.scale, c, 1.0);
  if (!scale) return scale.status();
  const int64_t rh = config.resizeDims.empty() ? h : config.resizeDims[0];
  const int64_t rw = config.resizeDims.empty() ? w : config.resizeDims[1];
  if (rh < h || rw < w)
    return makeError("resize dims ", rh, "x", rw, " are smaller than the model input's ", h, "x", w);

  std::vector<double> px = toPixelFormat(image, config.pixelFormat);
  // Resized image on an rh x rw canvas (zero where keep_aspect_ratio pads).
  std::vector<double> canvas;
  if (config.keepAspectRatio) {
    const double r = std::min(double(rh) / double(image.height), double(rw) / double(image.width));
    const int64_t nh = std::clamp(int64_t(std::floor(double(image.height) * r + 0.5)), int64_t(1), rh);
    const int64_t nw = std::clamp(int64_t(std::floor(double(image.width) * r + 0.5)), int64_t(1), rw);
    std::vector<double> inner = resize(px, image.height, image.width, c, nh, nw);
    canvas.assign(size_t(rh * rw * c), 0.0);
    const int64_t top = (rh - nh) / 2, left = (rw - nw) / 2;
    for (int64_t y = 0; y < nh; ++y)
      std::copy_n(&inner[size_t(y * nw * c)], nw * c, &canvas[size_t(((top + y) * rw + left) * c)]);
  } else {
    canvas = resize(px, image.height, image.width, c, rh, rw);
  }
  const int64_t top = (rh - h) / 2, left = (rw - w) / 2; // centre crop
  std::vector<float> out(size_t(n * c * h * w));
  for (int64_t y = 0; y < h; ++y)
    for (int64_t x = 0; x < w; ++x)
      for (int64_t k = 0; k < c; ++k) {
        double v = canvas[size_t(((top + y) * rw + left + x) * c + k)];
        float f = float((v - (*mean)[size_t(k)]) * (*scale)[size_t(k)]);
        out[size_t(nchw ? (k * h + y) * w + x : (y * w + x) * c + k)] = f;
      }
  const size_t item = out.size() / size_t(n);
  for (int64_t b = 1; b < n; ++b) std::copy_n(out.begin(), item, out.begin() + b * int64_t(item));
  return NpyArray::from(shape, out);
}

Result<NpyArray> loadImageTensor(const std::string &path, const Config &config, const std::vector<int64_t> &shape) {
  auto image = decodeImageFile(path);
  if (!image) return image.status();
  auto t = imageToTensor(*image, config, shape);
  if (!t) return makeError(path, ": ", t.message());
  return t;
}

} // namespace tpu::preprocess
