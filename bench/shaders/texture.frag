#version 330
// One bilinear sample (the sampler state sets LINEAR min/mag filters, no mipmaps).
uniform sampler2D tex;
in vec2 v_uv;
out vec4 f_color;
void main() {
    f_color = texture(tex, v_uv);
}
