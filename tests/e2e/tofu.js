(root) => {
  const byFont = new Map();
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const el = walker.currentNode.parentElement;
    if (!el) continue;
    const style = getComputedStyle(el);
    if (style.display === "none" || style.visibility === "hidden") continue;
    const font = `${style.fontWeight} 32px ${style.fontFamily}`;
    const chars = byFont.get(font) || new Set();
    for (const ch of walker.currentNode.data) if (/\p{Script=Han}/u.test(ch)) chars.add(ch);
    byFont.set(font, chars);
  }
  const canvas = document.createElement("canvas");
  canvas.width = canvas.height = 48;
  const ctx = canvas.getContext("2d", {willReadFrequently: true});
  const draw = (font, ch) => {
    ctx.clearRect(0, 0, 48, 48);
    ctx.font = font;
    ctx.fillText(ch, 4, 38);
    return ctx.getImageData(0, 0, 48, 48).data.join(",");
  };
  const missing = [];
  let checked = 0;
  for (const [font, chars] of byFont) {
    const boxes = new Set([draw(font, "\u{10FFFD}"), draw(font, "\u{E000}")]);
    for (const ch of chars) {
      checked += 1;
      if (boxes.has(draw(font, ch))) missing.push(ch);
    }
  }
  return {checked, missing: [...new Set(missing)].join("")};
}
