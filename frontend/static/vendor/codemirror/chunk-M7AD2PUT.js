/*! Pallas Playground bundle: chunk-M7AD2PUT.js, built by frontend/build.mjs
 * with esbuild 0.28.2 from frontend/package-lock.json. Licences: LICENSES.txt beside this file.
 * source frontend/src/diff.js sha256 3bfd09e723342b44db1b44d228436879654c16406750db63c319580bf3aa1ea5
 * source frontend/src/editor.js sha256 9013c8778709dc0095e20e85ae70661fc9ef3528dfb90d66c01dcff3e07dc9d2
 * source frontend/src/look.js sha256 d6f2340dd1244c0ef7795d6c091ce48d8d568f592578d9a610e92fb0df509ef3
 * source frontend/src/markdown.js sha256 6ed22dda500427e121c2979935a6ae2f30d6d2f76e643e04f35caf6c29c321c2
 */
var d=Object.defineProperty;var e=(b,a,c)=>a in b?d(b,a,{enumerable:!0,configurable:!0,writable:!0,value:c}):b[a]=c;var f=(b,a)=>{for(var c in a)d(b,c,{get:a[c],enumerable:!0})};var g=(b,a,c)=>e(b,typeof a!="symbol"?a+"":a,c);export{f as a,g as b};
