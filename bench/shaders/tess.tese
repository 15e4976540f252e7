#version 410 core
// Tessellation bench: bilinear position and colour over the patch's corners.
layout(quads, equal_spacing, ccw) in;
in vec4 e_color[];
out vec4 v_color;
void main() {
    vec2 t = gl_TessCoord.xy;
    vec4 a = mix(gl_in[0].gl_Position, gl_in[1].gl_Position, t.x);
    vec4 b = mix(gl_in[3].gl_Position, gl_in[2].gl_Position, t.x);
    gl_Position = mix(a, b, t.y);
    vec4 ca = mix(e_color[0], e_color[1], t.x);
    vec4 cb = mix(e_color[3], e_color[2], t.x);
    v_color = mix(ca, cb, t.y);
}
