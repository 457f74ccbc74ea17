// A small command-line parser shared by every tpuc subcommand, so flags read
// the same everywhere: "--name value", "--name=value", "-o value", positionals.
#pragma once

#include "support/Status.h"

#include <map>
#include <string>
#include <vector>

namespace tpu {

class ArgParser {
public:
  ArgParser(std::string command, std::string usage)
      : command_(std::move(command)), usage_(std::move(usage)) {}

  // Declares an option taking a value. Aliases like "-o" may be given.
  void option(const std::string &name, const std::string &help,
              const std::string &alias = "");
  // Declares a boolean switch.
  void flag(const std::string &name, const std::string &help);
  // Declares how many positional arguments are accepted.
  void positionals(size_t min, size_t max, const std::string &names);

  // Parses argv (without the program and subcommand names).
  Status parse(int argc, char **argv);
  Status parse(const std::vector<std::string> &args);

  bool has(const std::string &name) const { return values_.count(name) != 0; }
  std::string get(const std::string &name, const std::string &dflt = "") const;
  bool isSet(const std::string &name) const { return flags_.count(name) != 0; }
  // Parses an integer or floating value, with an error naming the option.
  Result<long long> getInt(const std::string &name, long long dflt) const;
  Result<double> getDouble(const std::string &name, double dflt) const;
  const std::vector<std::string> &args() const { return positional_; }
  std::string help() const;
  bool helpRequested() const { return help_; }

private:
  struct Spec {
    std::string help;
    bool takesValue;
  };
  std::string command_, usage_, positionalNames_;
  size_t minPos_ = 0, maxPos_ = 0;
  std::map<std::string, Spec> specs_;
  std::map<std::string, std::string> aliases_;
  std::map<std::string, std::string> values_;
  std::map<std::string, bool> flags_;
  std::vector<std::string> positional_;
  bool help_ = false;
};

} // namespace tpu
