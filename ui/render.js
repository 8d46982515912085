// WebGL2 drawing: the skinned mesh, skinned in the vertex shader from the
// server's final matrices as they arrive (mat3x4 rows in a float texture,
// one texel row per matrix), then the armature as lines.

const VS = `#version 300 es
layout(location = 0) in vec3 aPos;
layout(location = 1) in vec3 aNormal;
layout(location = 2) in uvec4 aJoints;
layout(location = 3) in vec4 aWeights;
uniform highp sampler2D uBones; // width 3: the rows of each final matrix as mat3x4
uniform mat4 uModel, uView, uProj;
out vec3 vNormal;
mat3x4 bone(uint j) {
  int r = int(j);
  return mat3x4(texelFetch(uBones, ivec2(0, r), 0), texelFetch(uBones, ivec2(1, r), 0), texelFetch(uBones, ivec2(2, r), 0));
}
void main() {
  // vec4(p, 1) * M is the skinned position for the server's mat3x4 layout.
  mat3x4 m = aWeights.x * bone(aJoints.x) + aWeights.y * bone(aJoints.y)
           + aWeights.z * bone(aJoints.z) + aWeights.w * bone(aJoints.w);
  vec3 p = vec4(aPos, 1.0) * m;
  vec3 n = vec4(aNormal, 0.0) * m;
  vNormal = mat3(uModel) * n;
  gl_Position = uProj * uView * uModel * vec4(p, 1.0);
}`;

const FS = `#version 300 es
precision mediump float;
in vec3 vNormal;
uniform vec3 uColor;
uniform bool uFlat; // unlit: silhouettes for the browser tests
out vec4 outColor;
void main() {
  if (uFlat) { outColor = vec4(uColor, 1.0); return; }
  float len = length(vNormal);
  float d = len > 0.0 ? abs(dot(vNormal / len, normalize(vec3(0.4, 0.8, 0.5)))) : 0.5;
  outColor = vec4(uColor * (0.45 + 0.55 * d), 1.0);
}`;

const LINE_VS = `#version 300 es
layout(location = 0) in vec3 aPos;
layout(location = 1) in vec3 aColor;
uniform mat4 uView, uProj;
out vec3 vColor;
void main() { vColor = aColor; gl_Position = uProj * uView * vec4(aPos, 1.0); gl_PointSize = 7.0; }`;

const LINE_FS = `#version 300 es
precision mediump float;
in vec3 vColor;
out vec4 outColor;
void main() { outColor = vec4(vColor, 1.0); }`;

// The server-skinned mesh: positions already skinned (mesh space), one colour.
const PLAIN_VS = `#version 300 es
layout(location = 0) in vec3 aPos;
uniform mat4 uModel, uView, uProj;
void main() { gl_Position = uProj * uView * uModel * vec4(aPos, 1.0); }`;

const PLAIN_FS = `#version 300 es
precision mediump float;
uniform vec3 uColor;
out vec4 outColor;
void main() { outColor = vec4(uColor, 1.0); }`;

export const CLEAR = [0.1, 0.1, 0.12];

function compile(gl, vs, fs) {
  const p = gl.createProgram();
  for (const [type, src] of [[gl.VERTEX_SHADER, vs], [gl.FRAGMENT_SHADER, fs]]) {
    const s = gl.createShader(type);
    gl.shaderSource(s, src);
    gl.compileShader(s);
    if (!gl.getShaderParameter(s, gl.COMPILE_STATUS)) throw new Error("shader: " + gl.getShaderInfoLog(s));
    gl.attachShader(p, s);
  }
  gl.linkProgram(p);
  if (!gl.getProgramParameter(p, gl.LINK_STATUS)) throw new Error("program: " + gl.getProgramInfoLog(p));
  return p;
}

export class Renderer {
  constructor(canvas) {
    const gl = canvas.getContext("webgl2", { antialias: true });
    if (!gl) throw new Error("this browser has no WebGL2");
    this.gl = gl;
    this.canvas = canvas;
    this.prog = compile(gl, VS, FS);
    this.lineProg = compile(gl, LINE_VS, LINE_FS);
    this.plainProg = compile(gl, PLAIN_VS, PLAIN_FS);
    this.pu = {};
    for (const n of ["uModel", "uView", "uProj", "uColor"]) this.pu[n] = gl.getUniformLocation(this.plainProg, n);
    this.server = [];
    this.u = {};
    for (const n of ["uBones", "uModel", "uView", "uProj", "uColor", "uFlat"]) this.u[n] = gl.getUniformLocation(this.prog, n);
    this.lu = { uView: gl.getUniformLocation(this.lineProg, "uView"), uProj: gl.getUniformLocation(this.lineProg, "uProj") };
    this.boneTex = gl.createTexture();
    gl.bindTexture(gl.TEXTURE_2D, this.boneTex);
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MIN_FILTER, gl.NEAREST);
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MAG_FILTER, gl.NEAREST);
    this.meshes = [];
    this.lineVao = gl.createVertexArray();
    this.lineBuf = gl.createBuffer();
    this.lineCount = 0;
    this.pointCount = 0;
  }

  setMesh(mesh) {
    const gl = this.gl;
    for (const m of this.meshes) { gl.deleteVertexArray(m.vao); m.bufs.forEach((b) => gl.deleteBuffer(b)); }
    this.meshes = [];
    this.model = mesh ? mesh.world : null;
    if (!mesh) return;
    for (const p of mesh.primitives) {
      const vao = gl.createVertexArray();
      gl.bindVertexArray(vao);
      const bufs = [];
      const attr = (loc, data, size, integer) => {
        const b = gl.createBuffer();
        bufs.push(b);
        gl.bindBuffer(gl.ARRAY_BUFFER, b);
        gl.bufferData(gl.ARRAY_BUFFER, data, gl.STATIC_DRAW);
        gl.enableVertexAttribArray(loc);
        if (integer) gl.vertexAttribIPointer(loc, size, gl.UNSIGNED_SHORT, 0, 0);
        else gl.vertexAttribPointer(loc, size, gl.FLOAT, false, 0, 0);
      };
      attr(0, p.position, 3);
      attr(1, p.normal, 3);
      attr(2, p.joints, 4, true);
      attr(3, p.weights, 4);
      const ib = gl.createBuffer();
      bufs.push(ib);
      gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, ib);
      gl.bufferData(gl.ELEMENT_ARRAY_BUFFER, p.indices, gl.STATIC_DRAW);
      gl.bindVertexArray(null);
      this.meshes.push({ vao, bufs, count: p.indices.length });
    }
  }

  // The server-skinned primitives: [{ positions (Float32Array), indices }],
  // drawn as their triangles' edges (or filled, for the silhouette test).
  setServerMesh(prims) {
    const gl = this.gl;
    for (const m of this.server) { gl.deleteVertexArray(m.vao); m.bufs.forEach((b) => gl.deleteBuffer(b)); }
    this.server = [];
    for (const p of prims || []) {
      const vao = gl.createVertexArray(), pb = gl.createBuffer(), tb = gl.createBuffer(), eb = gl.createBuffer();
      gl.bindVertexArray(vao);
      gl.bindBuffer(gl.ARRAY_BUFFER, pb);
      gl.bufferData(gl.ARRAY_BUFFER, p.positions, gl.STATIC_DRAW);
      gl.enableVertexAttribArray(0);
      gl.vertexAttribPointer(0, 3, gl.FLOAT, false, 0, 0);
      gl.bindVertexArray(null);
      const edges = new Uint32Array(p.indices.length * 2);
      for (let t = 0; t < p.indices.length; t += 3)
        for (let e = 0; e < 3; e++) { edges[2 * (t + e)] = p.indices[t + e]; edges[2 * (t + e) + 1] = p.indices[t + (e + 1) % 3]; }
      gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, tb);
      gl.bufferData(gl.ELEMENT_ARRAY_BUFFER, p.indices, gl.STATIC_DRAW);
      gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, eb);
      gl.bufferData(gl.ELEMENT_ARRAY_BUFFER, edges, gl.STATIC_DRAW);
      this.server.push({ vao, bufs: [pb, tb, eb], tris: tb, edges: eb, count: p.indices.length });
    }
  }

  drawServer(view, proj, flat) {
    const gl = this.gl;
    gl.useProgram(this.plainProg);
    gl.uniformMatrix4fv(this.pu.uModel, false, this.model);
    gl.uniformMatrix4fv(this.pu.uView, false, view);
    gl.uniformMatrix4fv(this.pu.uProj, false, proj);
    if (flat) gl.uniform3f(this.pu.uColor, 1, 1, 1);
    else gl.uniform3f(this.pu.uColor, 0.3, 1, 0.45);
    for (const m of this.server) {
      gl.bindVertexArray(m.vao);
      // The element buffer is part of the VAO's state: bind it inside.
      gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, flat ? m.tris : m.edges);
      if (flat) gl.drawElements(gl.TRIANGLES, m.count, gl.UNSIGNED_INT, 0);
      else gl.drawElements(gl.LINES, m.count * 2, gl.UNSIGNED_INT, 0);
    }
  }

  // `mats`: Float32Array of (B+1) × 12 floats, the server's mat3x4 answer.
  setBones(mats) {
    const gl = this.gl;
    gl.bindTexture(gl.TEXTURE_2D, this.boneTex);
    gl.texImage2D(gl.TEXTURE_2D, 0, gl.RGBA32F, 3, mats.length / 12, 0, gl.RGBA, gl.FLOAT, mats);
  }

  // segments: [[x,y,z], [x,y,z], color] world-space pairs; points likewise.
  setLines(segments, points) {
    const gl = this.gl, v = [];
    for (const [a, b, c] of segments) v.push(...a, ...c, ...b, ...c);
    for (const [p, c] of points) v.push(...p, ...c);
    gl.bindVertexArray(this.lineVao);
    gl.bindBuffer(gl.ARRAY_BUFFER, this.lineBuf);
    gl.bufferData(gl.ARRAY_BUFFER, new Float32Array(v), gl.DYNAMIC_DRAW);
    gl.enableVertexAttribArray(0);
    gl.vertexAttribPointer(0, 3, gl.FLOAT, false, 24, 0);
    gl.enableVertexAttribArray(1);
    gl.vertexAttribPointer(1, 3, gl.FLOAT, false, 24, 12);
    gl.bindVertexArray(null);
    this.lineCount = segments.length * 2;
    this.pointCount = points.length;
  }

  // server: draw the server-skinned mesh (setServerMesh) too, as edges over
  // the GPU-skinned one (hidden ones stay hidden), or filled when flat.
  draw(view, proj, { mesh = true, armature = true, flat = false, server = false } = {}) {
    const gl = this.gl;
    gl.viewport(0, 0, this.canvas.width, this.canvas.height);
    gl.clearColor(CLEAR[0], CLEAR[1], CLEAR[2], 1);
    gl.clear(gl.COLOR_BUFFER_BIT | gl.DEPTH_BUFFER_BIT);
    gl.enable(gl.DEPTH_TEST);
    gl.disable(gl.CULL_FACE);
    if (mesh && this.model && this.meshes.length) {
      gl.useProgram(this.prog);
      gl.activeTexture(gl.TEXTURE0);
      gl.bindTexture(gl.TEXTURE_2D, this.boneTex);
      gl.uniform1i(this.u.uBones, 0);
      gl.uniformMatrix4fv(this.u.uModel, false, this.model);
      gl.uniformMatrix4fv(this.u.uView, false, view);
      gl.uniformMatrix4fv(this.u.uProj, false, proj);
      if (flat) gl.uniform3f(this.u.uColor, 1, 1, 1);
      else gl.uniform3f(this.u.uColor, 0.85, 0.55, 0.3);
      gl.uniform1i(this.u.uFlat, flat ? 1 : 0);
      // Pushed back a little so the server mesh's edges on it pass the depth test.
      if (server) { gl.enable(gl.POLYGON_OFFSET_FILL); gl.polygonOffset(1, 1); }
      for (const m of this.meshes) {
        gl.bindVertexArray(m.vao);
        gl.drawElements(gl.TRIANGLES, m.count, gl.UNSIGNED_INT, 0);
      }
      gl.disable(gl.POLYGON_OFFSET_FILL);
    }
    if (server && this.model && this.server.length) this.drawServer(view, proj, flat);
    if (armature && this.lineCount + this.pointCount > 0) {
      gl.disable(gl.DEPTH_TEST); // the armature is inside the mesh: draw it on top
      gl.useProgram(this.lineProg);
      gl.uniformMatrix4fv(this.lu.uView, false, view);
      gl.uniformMatrix4fv(this.lu.uProj, false, proj);
      gl.bindVertexArray(this.lineVao);
      if (this.lineCount) gl.drawArrays(gl.LINES, 0, this.lineCount);
      if (this.pointCount) gl.drawArrays(gl.POINTS, this.lineCount, this.pointCount);
    }
    gl.bindVertexArray(null);
  }
}
