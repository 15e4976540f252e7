#version 330
// Pass-through: clip-space position and a colour varying (bench scenes fill, medium, small, blend, alu40).
layout(location = 0) in vec4 in_pos;
layout(location = 1) in vec4 in_color;
out vec4 v_color;
void main() {
    gl_Position = in_pos;
    v_color = in_color;
}
