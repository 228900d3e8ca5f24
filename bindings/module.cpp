// ikstack._native: the C++ library's Python module.
#include <nanobind/nanobind.h>

#ifdef IKSTACK_HAVE_CORE
#define IKSTACK_HAVE_CORE_FLAG true
#else
#define IKSTACK_HAVE_CORE_FLAG false
#endif
namespace nb = nanobind;

NB_MODULE(_native, m) {
    m.doc() = "The C++ kinematics and servo kernel (ikstack's native library).";
    m.attr("HAVE_CORE") = bool(IKSTACK_HAVE_CORE_FLAG);
}
