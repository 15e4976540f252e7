#version 410 core
// Tessellation bench: quad patches, every level 28 (~1,570 triangles a patch).
layout(vertices = 4) out;
in vec4 c_color[];
out vec4 e_color[];
void main() {
    gl_out[gl_InvocationID].gl_Position = gl_in[gl_InvocationID].gl_Position;
    e_color[gl_InvocationID] = c_color[gl_InvocationID];
    gl_TessLevelOuter[0] = 28.0;
    gl_TessLevelOuter[1] = 28.0;
    gl_TessLevelOuter[2] = 28.0;
    gl_TessLevelOuter[3] = 28.0;
    gl_TessLevelInner[0] = 28.0;
    gl_TessLevelInner[1] = 28.0;
}
