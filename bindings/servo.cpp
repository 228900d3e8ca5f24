// The servo kernel (bound when the C++ library has it).
#include "common.hpp"

#if __has_include("ikstack/servo.hpp")
#define IKSTACK_PY_HAVE_SERVO 1
#endif

namespace ikstack_py {

#ifndef IKSTACK_PY_HAVE_SERVO
void bind_servo(nb::module_& m) { m.attr("HAVE_SERVO") = false; }
#endif

}  // namespace ikstack_py
