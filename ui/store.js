// The GLB kept in the page (IndexedDB, per skeleton id): the attributes and
// triangles the page draws a skeleton's mesh from.

function idb() {
  return new Promise((resolve, reject) => {
    const r = indexedDB.open("skinnerd-preview", 1);
    r.onupgradeneeded = () => r.result.createObjectStore("glb");
    r.onsuccess = () => resolve(r.result);
    r.onerror = () => reject(r.error);
  });
}
export async function glbPut(id, buf) {
  try {
    const db = await idb();
    await new Promise((res, rej) => { const t = db.transaction("glb", "readwrite"); t.objectStore("glb").put(buf, id); t.oncomplete = res; t.onerror = () => rej(t.error); });
  } catch (e) { console.warn("IndexedDB unavailable; the mesh stays in memory only", e); }
}
async function glbGet(id) {
  try {
    const db = await idb();
    return await new Promise((res, rej) => { const r = db.transaction("glb").objectStore("glb").get(id); r.onsuccess = () => res(r.result); r.onerror = () => rej(r.error); });
  } catch { return undefined; }
}
export const memoryGlb = new Map();

// The mesh for skeleton `id`: the GLB uploaded from this browser, else the
// sample built into the daemon under that id (Fox as "fox"), else none.
export async function findGlb(id) {
  if (memoryGlb.has(id)) return memoryGlb.get(id);
  const kept = await glbGet(id);
  if (kept) return kept;
  const res = await fetch(`samples/${encodeURIComponent(id)}.glb`);
  return res.ok ? res.arrayBuffer() : null;
}
