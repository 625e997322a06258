// FitError and Diagnosis are SDK types (<ksched/fit_error.h>), shared with PostFilter plugins;
// the scheduling loop and its tests name them framework::FitError and framework::Diagnosis.
#pragma once

#include <ksched/fit_error.h>

namespace ksched::framework {

using ksched::Diagnosis;
using ksched::FitError;

}  // namespace ksched::framework
