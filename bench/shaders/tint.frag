#version 330
// The second fragment shader of many-mixed: the colour darkened, alpha kept.
in vec4 v_color;
out vec4 f_color;
void main() {
    f_color = v_color * vec4(0.5, 0.5, 0.5, 1.0);
}
