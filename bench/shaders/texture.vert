#version 330
// Pass-through: clip-space position and a texture coordinate (in_uv.xy).
layout(location = 0) in vec4 in_pos;
layout(location = 1) in vec4 in_uv;
out vec2 v_uv;
void main() {
    gl_Position = in_pos;
    v_uv = in_uv.xy;
}
