#version 430
// y = 2.5 * x + y over float buffers, 64 invocations per block (bench scene "compute").
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer XBuf { float x[]; };
layout(std430, binding = 1) buffer YBuf { float y[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    y[i] = 2.5 * x[i] + y[i];
}
