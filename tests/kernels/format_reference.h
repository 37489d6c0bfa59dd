// Reference model of the narrow float formats, written independently of the kernels: values are
// decoded from the bit fields with ldexp, and rounding searches the sorted table of all finite
// values of the format (ties to the even code).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace dc::test {

class FormatReference {
 public:
  // ieee_specials: the all-ones exponent holds inf/NaN (else only the all-ones magnitude is NaN).
  // saturating: finite overflow rounds to the largest finite value instead of infinity.
  FormatReference(int bits, int mant_bits, int bias, bool ieee_specials, bool saturating)
      : bits_(bits),
        mant_bits_(mant_bits),
        exp_bits_(bits - 1 - mant_bits),
        bias_(bias),
        ieee_specials_(ieee_specials),
        saturating_(saturating) {
    for (uint32_t code = 0; code < magnitude_codes(); ++code) {
      const double v = decode(code);
      if (std::isfinite(v)) finite_.push_back(v);  // codes of finite values are 0..n-1, ascending
    }
  }

  uint32_t magnitude_codes() const { return 1u << (bits_ - 1); }
  uint32_t sign_bit() const { return 1u << (bits_ - 1); }
  uint32_t max_finite_code() const { return uint32_t(finite_.size() - 1); }
  double max_finite() const { return finite_.back(); }
  const std::vector<double>& finite_values() const { return finite_; }

  double decode(uint32_t code) const {
    const bool negative = (code & sign_bit()) != 0;
    const uint32_t mag = code & (sign_bit() - 1);
    const uint32_t e = mag >> mant_bits_;
    const uint32_t m = mag & ((1u << mant_bits_) - 1);
    const uint32_t e_max = (1u << exp_bits_) - 1;
    double v;
    if (ieee_specials_ && e == e_max) {
      v = m == 0 ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
    } else if (!ieee_specials_ && mag == sign_bit() - 1) {
      v = std::numeric_limits<double>::quiet_NaN();
    } else if (e == 0) {
      v = std::ldexp(double(m), 1 - bias_ - mant_bits_);
    } else {
      v = std::ldexp(double(m + (1u << mant_bits_)), int(e) - bias_ - mant_bits_);
    }
    return negative ? -v : v;
  }

  bool is_nan(uint32_t code) const { return std::isnan(decode(code)); }

  // Correctly rounded code of x (x must not be NaN).
  uint32_t round(double x) const {
    const uint32_t sign = std::signbit(x) ? sign_bit() : 0u;
    const double ax = std::fabs(x);
    return sign | round_magnitude(ax);
  }

 private:
  uint32_t inf_code() const { return ((1u << exp_bits_) - 1) << mant_bits_; }

  uint32_t round_magnitude(double ax) const {
    const uint32_t top = max_finite_code();
    if (std::isinf(ax)) return ieee_specials_ ? inf_code() : top;
    if (ax > finite_.back()) {
      if (saturating_) return top;
      const double half_ulp = (finite_[top] - finite_[top - 1]) / 2;
      return ax >= finite_.back() + half_ulp ? inf_code() : top;
    }
    // First value >= ax, then pick the nearer neighbour (exact differences: Sterbenz).
    uint32_t lo = 0, hi = top;
    while (lo < hi) {
      const uint32_t mid = (lo + hi) / 2;
      if (finite_[mid] < ax) lo = mid + 1;
      else hi = mid;
    }
    if (finite_[lo] == ax || lo == 0) return lo;
    const double up = finite_[lo] - ax;
    const double down = ax - finite_[lo - 1];
    if (up < down) return lo;
    if (down < up) return lo - 1;
    return (lo % 2 == 0) ? lo : lo - 1;
  }

  int bits_, mant_bits_, exp_bits_, bias_;
  bool ieee_specials_, saturating_;
  std::vector<double> finite_;
};

inline const FormatReference& half_reference() {
  static const FormatReference f(16, 10, 15, true, false);
  return f;
}
inline const FormatReference& bf16_reference() {
  static const FormatReference f(16, 7, 127, true, false);
  return f;
}
inline const FormatReference& e4m3_reference() {
  static const FormatReference f(8, 3, 7, false, true);
  return f;
}
inline const FormatReference& e5m2_reference() {
  static const FormatReference f(8, 2, 15, true, true);
  return f;
}

}  // namespace dc::test
