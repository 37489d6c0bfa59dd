// Sizes and names of datatypes and built-in reduction ops.
#include "kernels/reduce.h"

namespace dc {

size_t datatype_size(dcDataType_t dt) {
  switch (dt) {
    case dcInt8:
    case dcUint8:
    case dcFloat8e4m3:
    case dcFloat8e5m2: return 1;
    case dcFloat16:
    case dcBfloat16: return 2;
    case dcInt32:
    case dcUint32:
    case dcFloat32: return 4;
    case dcInt64:
    case dcUint64:
    case dcFloat64: return 8;
    default: return 0;
  }
}

const char* datatype_name(dcDataType_t dt) {
  switch (dt) {
    case dcInt8: return "int8";
    case dcUint8: return "uint8";
    case dcInt32: return "int32";
    case dcUint32: return "uint32";
    case dcInt64: return "int64";
    case dcUint64: return "uint64";
    case dcFloat16: return "half";
    case dcFloat32: return "float";
    case dcFloat64: return "double";
    case dcBfloat16: return "bfloat16";
    case dcFloat8e4m3: return "fp8e4m3";
    case dcFloat8e5m2: return "fp8e5m2";
    default: return "unknown";
  }
}

const char* redop_name(dcRedOp_t op) {
  switch (op) {
    case dcSum: return "sum";
    case dcProd: return "prod";
    case dcMax: return "max";
    case dcMin: return "min";
    case dcAvg: return "avg";
    default: return "unknown";
  }
}

}  // namespace dc
