// sdcRisk numerical core: plain C++17, header-only, no R headers.
#ifndef SDCRISK_SDCRISK_HPP
#define SDCRISK_SDCRISK_HPP

#include "algebra.hpp"
#include "cells.hpp"
#include "dense_ids.hpp"
#include "design.hpp"
#include "design_optimal.hpp"
#include "errors.hpp"
#include "estimate.hpp"
#include "logdist.hpp"
#include "memory.hpp"
#include "perturb.hpp"
#include "plan.hpp"
#include "plan_vars.hpp"
#include "population.hpp"
#include "progress.hpp"
#include "quadrature.hpp"
#include "risk.hpp"
#include "risk_known.hpp"
#include "risk_vars.hpp"
#include "simulate.hpp"
#include "table_sensitivity.hpp"

#endif  // SDCRISK_SDCRISK_HPP
