// Image preprocessing, TPU-MLIR style: how an image file becomes a model
// input tensor. One implementation for calibration (`tpuc calibrate
// --dataset images/`), `tpuc run --image` and `tpuc flow --test-image`, so
// calibration and test inputs are made one way. The settings are recorded in
// the Top module by `tpuc import` (PreprocessAttr.h) and read back from it.
//
// Pipeline (every step in double, one rounding to float32 at the end, so a
// NumPy reference reproduces it bit for bit: tests/preprocess):
//  1. decode (PNG / JPEG / BMP, stb_image) to 8-bit pixels; alpha dropped;
//  2. pixel format: rgb / bgr (gray files replicated), or gray (colour files
//     converted with Pillow's "L" formula (19595 R + 38470 G + 7471 B + 2^15) >> 16);
//  3. resize to resize_dims (default: the input's H x W) by bilinear
//     interpolation with half-pixel centres (src = (dst + 0.5) * in / out - 0.5,
//     clamped at 0 and at the last pixel), no antialiasing; with
//     keep_aspect_ratio the image is scaled by min(rh / h, rw / w) to
//     (floor(h * r + 0.5), floor(w * r + 0.5)) and centred on a zero canvas;
//  4. centre crop to the input's H x W when resize_dims is larger;
//  5. per channel (x - mean[c]) * scale[c];
//  6. channel_format nchw or nhwc; a batch of N repeats the image N times.
#pragma once

#include "support/Npz.h"
#include "support/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tpu::preprocess {

enum class PixelFormat { Rgb, Bgr, Gray };
enum class ChannelFormat { Nchw, Nhwc };

struct Config {
  std::vector<double> mean;  // one value per channel, or one for all; empty = 0
  std::vector<double> scale; // likewise; empty = 1
  PixelFormat pixelFormat = PixelFormat::Rgb;
  ChannelFormat channelFormat = ChannelFormat::Nchw;
  std::vector<int64_t> resizeDims; // {h, w}; empty = the input's H x W
  bool keepAspectRatio = false;
};

const char *pixelFormatName(PixelFormat f);
const char *channelFormatName(ChannelFormat f);

// The CLI flags' text, each empty when the flag was not given: mean and scale
// "a,b,c" (or one value), pixel format rgb|bgr|gray, channel format
// nchw|nhwc, resize dims "h,w". Errors name the flag and the bad value.
struct ConfigText {
  std::string mean, scale, pixelFormat, channelFormat, resizeDims;
  bool keepAspectRatio = false;
  bool empty() const;
};
Result<Config> parseConfig(const ConfigText &text);

// 8-bit pixels, rows top to bottom, channels interleaved (1 gray, 3 RGB).
struct Image {
  int64_t height = 0, width = 0, channels = 0;
  std::vector<uint8_t> pixels;
};

// True for the file names taken as images: .png, .jpg, .jpeg, .bmp (any case).
bool isImageFile(const std::string &path);

// Decodes an image file; an error names the file and what is wrong with it.
Result<Image> decodeImageFile(const std::string &path);

// The float32 input tensor of `shape` (rank 4, NCHW or NHWC per the config)
// made from `image`. Errors: a shape that is not rank 4, a channel count the
// pixel format does not give, mean/scale lists of the wrong length,
// resize_dims smaller than the input.
Result<NpyArray> imageToTensor(const Image &image, const Config &config, const std::vector<int64_t> &shape);

// decodeImageFile + imageToTensor, errors prefixed with the file name.
Result<NpyArray> loadImageTensor(const std::string &path, const Config &config, const std::vector<int64_t> &shape);

} // namespace tpu::preprocess
