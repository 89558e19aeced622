#include "report.hpp"

#include <fcntl.h>     // open (O_EXCL: the probe never touches an existing file)
#include <sys/stat.h>  // stat (a directory is not a file to write)
#include <unistd.h>    // getpid, close

#include <algorithm>
#include <cerrno>
#include <cstdlib>  // getenv
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <sstream>

namespace tut {

std::string format_bytes(double bytes) {
  char buf[64];
  if (bytes < 1024) std::snprintf(buf, sizeof buf, "%.0f B", bytes);
  else if (bytes < 1024.0 * 1024) std::snprintf(buf, sizeof buf, "%.1f KiB", bytes / 1024);
  else if (bytes < 1024.0 * 1024 * 1024)
    std::snprintf(buf, sizeof buf, "%.1f MiB", bytes / (1024.0 * 1024));
  else std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / (1024.0 * 1024 * 1024));
  return buf;
}

std::string check_label(const ResultRow& row) {
  if (row.skipped) return "SKIP";
  if (row.negative) return row.passed ? "PASS (BROKEN CHECK)" : "FAIL (expected)";
  return row.passed ? "PASS" : "FAIL";
}

std::string format_header(const Report& r) {
  std::ostringstream os;
  os << r.title << "\n"
     << "GPU: " << r.device.name << " | CC " << r.device.cc_major << "." << r.device.cc_minor
     << " | " << r.device.sm_count << " SMs | L2 " << format_bytes(double(r.device.l2_bytes))
     << " | seed " << r.seed << "\n";
  if (!r.size_text.empty()) os << "size: " << r.size_text << "\n";
  if (!r.check_only && r.ceiling_rate > 0) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "ceiling: %s = %.1f %s (median %.4f ms, same run)\n",
                  r.ceiling_name.c_str(), r.ceiling_rate, r.metric.c_str(), r.ceiling_ms);
    os << buf;
  }
  return os.str();
}

std::string format_table(const Report& r) {
  std::size_t name_width = 7;
  for (const ResultRow& row : r.rows) name_width = std::max(name_width, row.name.size());
  std::ostringstream os;
  char buf[256];
  std::snprintf(buf, sizeof buf, "%-*s | %9s | %9s | %9s | %9s | %7s | %6s | %s\n",
                int(name_width), "variant", "blocks/SM", "median ms", "min ms", r.metric.c_str(),
                "% ceil", "vs v0", "check");
  os << buf << std::string(name_width, '-')
     << "-|-----------|-----------|-----------|-----------|---------|--------|------\n";
  int batched = 0;
  for (const ResultRow& row : r.rows) {
    char blocks[16] = "-";
    if (row.blocks_per_sm > 0) std::snprintf(blocks, sizeof blocks, "%d", row.blocks_per_sm);
    if (row.timed) {
      char vs[16] = "     -";
      if (row.vs_v0 > 0) std::snprintf(vs, sizeof vs, "%5.2fx", row.vs_v0);
      std::snprintf(buf, sizeof buf, "%-*s | %9s | %9.4f | %9.4f | %9.1f | %6.1f%% | %6s | %s\n",
                    int(name_width), row.name.c_str(), blocks, row.median_ms, row.min_ms, row.rate,
                    row.pct_of_ceiling, vs, check_label(row).c_str());
      batched = std::max(batched, row.launches_per_sample > 1 ? row.launches_per_sample : 0);
    } else {
      std::snprintf(buf, sizeof buf, "%-*s | %9s | %9s | %9s | %9s | %7s | %6s | %s\n",
                    int(name_width), row.name.c_str(), blocks, "-", "-", "-", "-", "-",
                    check_label(row).c_str());
    }
    os << buf;
  }
  if (batched > 0)
    os << "(times are per launch; launches shorter than 1 ms were timed up to " << batched
       << " back to back per sample)\n";
  int pairs = 0;
  for (const ResultRow& row : r.rows) pairs = std::max(pairs, row.pairs);
  if (pairs > 0)
    os << "(% ceil: the median of " << pairs << " alternating pairs, this row then the ceiling: "
       << "A, B, A, B, ...; quartiles in the JSON)\n";
  if (!r.gpu_state.empty()) os << r.gpu_state << "\n";
  return os.str();
}

namespace {
// A temporary name in the same directory as `path` (rename() is atomic only within one file
// system), unique to this process.
std::string temporary_beside(const std::string& path) {
  return path + ".tmp" + std::to_string(static_cast<long long>(::getpid()));
}
}  // namespace

bool json_path_writable(const std::string& path, std::string& error) {
  struct stat st {};
  if (path.empty() || path.back() == '/' ||
      (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))) {
    error = "'" + path + "' is a directory; name a file in it, such as '" + path +
            (path.empty() || path.back() == '/' ? "" : "/") + "out.json'";
    return false;
  }
  const std::size_t slash = path.rfind('/');
  const std::string folder = slash == std::string::npos ? "." : path.substr(0, slash + 1);
  // The probe is a new file of its own (O_EXCL: an existing file of that name is never
  // opened, so never truncated or removed); only what the probe created is removed.
  for (int attempt = 0; attempt < 100; ++attempt) {
    const std::string probe = temporary_beside(path) + (attempt ? "." + std::to_string(attempt) : "");
    const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (fd >= 0) {
      ::close(fd);
      std::remove(probe.c_str());
      return true;
    }
    if (errno != EEXIST) {
      error = "cannot write '" + path + "': cannot create a file in the folder '" + folder +
              "': " + std::strerror(errno);
      return false;
    }
  }
  error = "cannot write '" + path + "': no free temporary name in '" + folder + "'";
  return false;
}

bool write_json_file(const std::string& path, const std::string& text) {
  const std::string tmp = temporary_beside(path);
  std::ofstream file(tmp);
  file << text;
  file.close();
  if (!file || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::fprintf(stderr, "error: cannot write %s: %s\n", path.c_str(), std::strerror(errno));
    std::remove(tmp.c_str());
    return false;
  }
  return true;
}

std::string sweep_json_path(const std::string& json_path) { return json_path + ".sweep.json"; }

bool write_sweep_json(const std::string& json_path, const std::string& text) {
  if (json_path.empty()) return true;
  const std::string path = sweep_json_path(json_path);
  if (!write_json_file(path, text)) return false;
  std::printf("sweep written to %s\n", path.c_str());
  return true;
}

std::string json_escape(const std::string& text) {
  std::ostringstream os;
  for (char c : text) {
    switch (c) {
      case '"': os << "\\\""; break;
      case '\\': os << "\\\\"; break;
      case '\n': os << "\\n"; break;
      case '\t': os << "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          os << buf;
        } else {
          os << c;
        }
    }
  }
  return os.str();
}

namespace {
std::string num(double v) {
  std::ostringstream os;
  os << std::setprecision(10) << v;
  return os.str();
}
std::string str(const std::string& s) { return "\"" + json_escape(s) + "\""; }
}  // namespace

std::string build_commit() {
#ifdef TUTORIAL_GIT_COMMIT
  return TUTORIAL_GIT_COMMIT;
#else
  return "unknown";
#endif
}

std::string run_call() {
  const char* call = std::getenv("TUTORIAL_RUN_CALL");
  return call ? call : "";
}

std::string to_json(const Report& r) {
  std::ostringstream os;
  os << "{\n  \"chapter\": " << str(r.chapter) << ",\n  \"commit\": " << str(r.commit)
     << ",\n  \"call\": " << str(r.call) << ",\n  \"title\": " << str(r.title)
     << ",\n  \"metric\": " << str(r.metric) << ",\n  \"size\": " << str(r.size_text)
     << ",\n  \"seed\": " << r.seed << ",\n  \"check_only\": " << (r.check_only ? "true" : "false")
     << ",\n  \"device\": {\"name\": " << str(r.device.name) << ", \"cc\": \""
     << r.device.cc_major << "." << r.device.cc_minor << "\", \"sms\": " << r.device.sm_count
     << ", \"l2_bytes\": " << r.device.l2_bytes << ", \"driver\": " << r.device.driver_version
     << ", \"runtime\": " << r.device.runtime_version << "},\n  \"ceiling\": {\"name\": "
     << str(r.ceiling_name) << ", \"rate\": " << num(r.ceiling_rate)
     << ", \"median_ms\": " << num(r.ceiling_ms) << "},\n  \"gpu_state\": " << str(r.gpu_state)
     << ",\n  \"clock_limits\": " << str(r.clock_limits)
     << ",\n  \"idle_before_timing_ms\": " << r.idle_before_timing_ms << ",\n  \"tour_lesson\": "
     << str(r.tour_lesson) << ",\n  \"tour_baseline\": " << str(r.tour_baseline)
     << ",\n  \"rows\": [";
  for (std::size_t i = 0; i < r.rows.size(); ++i) {
    const ResultRow& row = r.rows[i];
    os << (i ? "," : "") << "\n    {\"key\": " << str(row.key) << ", \"name\": " << str(row.name)
       << ", \"timed\": " << (row.timed ? "true" : "false")
       << ", \"blocks_per_sm\": "
       << (row.blocks_per_sm > 0 ? std::to_string(row.blocks_per_sm) : std::string("null"))
       << ", \"median_ms\": " << num(row.median_ms) << ", \"min_ms\": " << num(row.min_ms)
       << ", \"launches_per_sample\": " << row.launches_per_sample
       << ", \"rate\": " << num(row.rate) << ", \"pct_of_ceiling\": " << num(row.pct_of_ceiling)
       << ", \"pct_p25\": " << num(row.pct_p25) << ", \"pct_p75\": " << num(row.pct_p75)
       << ", \"pairs\": " << row.pairs << ", \"sm_mhz_start\": " << row.gpu_start.sm_mhz
       << ", \"sm_mhz_end\": " << row.gpu_end.sm_mhz << ", \"power_w_start\": "
       << num(row.gpu_start.power_w) << ", \"power_w_end\": " << num(row.gpu_end.power_w)
       << ", \"vs_v0\": " << num(row.vs_v0) << ", \"negative\": "
       << (row.negative ? "true" : "false") << ", \"skipped\": " << (row.skipped ? "true" : "false")
       << ", \"is_ceiling\": " << (row.is_ceiling ? "true" : "false") << ", \"passed\": " << (row.passed ? "true" : "false")
       << ", \"check\": " << str(check_label(row)) << ", \"detail\": " << str(row.check_detail)
       << "}";
  }
  os << "\n  ]\n}\n";
  return os.str();
}

void SweepRow::key(const std::string& name) {
  fields_ += (fields_.empty() ? "\"" : ", \"") + json_escape(name) + "\": ";
}
SweepRow& SweepRow::num(const std::string& k, double value) {
  key(k);
  fields_ += std::to_string(value);
  return *this;
}
SweepRow& SweepRow::integer(const std::string& k, long long value) {
  key(k);
  fields_ += std::to_string(value);
  return *this;
}
SweepRow& SweepRow::text(const std::string& k, const std::string& value) {
  key(k);
  fields_ += "\"" + json_escape(value) + "\"";
  return *this;
}
SweepRow& SweepRow::flag(const std::string& k, bool value) {
  key(k);
  fields_ += value ? "true" : "false";
  return *this;
}

SweepJson::SweepJson(const std::string& chapter_id)
    : text_("{" + SweepRow().text("chapter", chapter_id).fields()) {}
void SweepJson::close_array() {
  if (in_array_) text_ += "\n]";
  in_array_ = false;
}
// Top-level fields are spelled like a row's fields; a new one ends an open array.
SweepJson& SweepJson::field(const SweepRow& one) {
  close_array();
  text_ += ", " + one.fields();
  return *this;
}
SweepJson& SweepJson::num(const std::string& k, double value) {
  return field(SweepRow().num(k, value));
}
SweepJson& SweepJson::integer(const std::string& k, long long value) {
  return field(SweepRow().integer(k, value));
}
SweepJson& SweepJson::text(const std::string& k, const std::string& value) {
  return field(SweepRow().text(k, value));
}
SweepJson& SweepJson::array(const std::string& name) {
  close_array();
  text_ += ", \"" + json_escape(name) + "\": [";
  in_array_ = true;
  first_row_ = true;
  return *this;
}
SweepJson& SweepJson::add(const SweepRow& row) {
  if (!in_array_) array("sweep");
  text_ += std::string(first_row_ ? "" : ",") + "\n  {" + row.fields() + "}";
  first_row_ = false;
  return *this;
}
std::string SweepJson::str() const { return text_ + (in_array_ ? "\n]" : "") + "}\n"; }

}  // namespace tut
