#version 410 core
// Tessellation bench: control points pass through (position and colour).
layout(location = 0) in vec4 in_pos;
layout(location = 1) in vec4 in_color;
out vec4 c_color;
void main() {
    gl_Position = in_pos;
    c_color = in_color;
}
