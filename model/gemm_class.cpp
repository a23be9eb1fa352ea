#include "model/gemm_class.hpp"

namespace gpuplan::model {

GemmClass gemm_class_of(const Precision& p) {
    if (!p.weight_only) {
        // Canonical names of model/precision.cpp (aliases resolve to them).
        if (p.name == "mxfp8") {
            return GemmClass::Mxfp8;
        }
        if (p.name == "nvfp4") {
            return GemmClass::Nvfp4;
        }
        if (p.name == "mxfp4") {
            return GemmClass::Mxfp4;
        }
    }
    return gemm_class(p.compute);
}

std::string_view to_string(GemmClass c) {
    return name_of(c);
}

std::optional<GemmClass> find_gemm_class(std::string_view name) {
    return value_of<GemmClass>(name);
}

} // namespace gpuplan::model
