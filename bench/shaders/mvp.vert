#version 330
// One object of a many-draws frame: its own transform in a uniform (bench scenes many*).
uniform mat4 u_mvp;
layout(location = 0) in vec4 in_pos;
layout(location = 1) in vec4 in_color;
out vec4 v_color;
void main() {
    gl_Position = u_mvp * in_pos;
    v_color = in_color;
}
