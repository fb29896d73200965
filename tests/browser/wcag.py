"""Contrast as WCAG measures it, in the page: JavaScript the browser tests of colours share.

:data:`COMPOSITE_JS` defines ``over``, ``background``, ``opacity``, ``luminance`` and
``contrast`` in terms of a ``parse(colour) -> [r, g, b, alpha]`` that the code before it
defines (a regular expression for ``rgb()``, or a canvas for any CSS colour).
"""

from __future__ import annotations

__all__ = ["COMPOSITE_JS"]

#: Composite a colour over what is behind it (the backgrounds of the element and its
#: ancestors from the page's white canvas up, and its ancestors' opacity), and measure
#: relative luminance and the contrast ratio of two colours (WCAG 2).
COMPOSITE_JS = """
const over = (top, below) =>
  [0, 1, 2].map(i => top[i] * top[3] + below[i] * (1 - top[3])).concat([1]);
const background = (el) => {
  const chain = [];
  for (let e = el; e && e.nodeType === 1; e = e.parentElement) chain.push(e);
  let colour = [255, 255, 255, 1];
  for (const e of chain.reverse()) colour = over(parse(getComputedStyle(e).backgroundColor), colour);
  return colour;
};
const opacity = (el) => {
  let o = 1;
  for (let e = el; e && e.nodeType === 1; e = e.parentElement) o *= Number(getComputedStyle(e).opacity);
  return o;
};
const luminance = (c) => {
  const [r, g, b] = c.slice(0, 3).map(v => {
    v /= 255;
    return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4);
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
};
const contrast = (a, b) => {
  const [l1, l2] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (l1 + 0.05) / (l2 + 0.05);
};
"""
