// Everything of the C++ core but the servo: linear algebra, chains, differential IK, motion
// generators.
#pragma once

#include "ikstack/chain.hpp"
#include "ikstack/diffik.hpp"
#include "ikstack/errors.hpp"
#include "ikstack/linalg.hpp"
#include "ikstack/motion.hpp"
