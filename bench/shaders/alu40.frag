#version 330
// About 40 TGSI ALU instructions once Mesa has compiled it (see alu40.fs.tgsi):
// transcendental, dot, mix, fract, clamp and pow work on the interpolated colour.
in vec4 v_color;
out vec4 f_color;
void main() {
    vec3 c = v_color.rgb;
    vec3 p = c * 6.2831853 - 3.1415926;
    vec3 s = sin(p * 1.7 + vec3(0.3, 0.5, 0.7));
    vec3 q = cos(p.yzx * 2.3 - s);
    float l = dot(s, q) * 0.5 + 0.5;
    vec3 h = fract(c * 4.0 + l);
    vec3 m = mix(s, q, h);
    vec3 e = exp2(-abs(m) * 3.0);
    float r = inversesqrt(dot(e, e) + 0.25);
    vec3 g = clamp(e * r, 0.0, 1.0);
    vec3 k = pow(g + 0.01, vec3(2.2));
    vec3 t = k * k * (3.0 - 2.0 * k);
    float lum = dot(t, vec3(0.299, 0.587, 0.114));
    vec3 o = mix(vec3(lum), t, 1.3);
    o = max(o + sin(lum * 12.0) * 0.05, vec3(0.0));
    f_color = vec4(sqrt(o), v_color.a);
}
