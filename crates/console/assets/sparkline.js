// A sparkline: an inline SVG polyline of a short series, updated in place
// (the same element each time, only its points change: no flicker). Styled
// by class from style.css; no style attributes, which the CSP forbids.

const SVG = 'http://www.w3.org/2000/svg';
const WIDTH = 120;
const HEIGHT = 24;

/** A sparkline element and `update(samples)` with samples [{t, v}], oldest first. */
export function sparkline() {
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('class', 'spark');
  svg.setAttribute('viewBox', `0 0 ${WIDTH} ${HEIGHT}`);
  svg.setAttribute('width', String(WIDTH));
  svg.setAttribute('height', String(HEIGHT));
  svg.setAttribute('preserveAspectRatio', 'none');
  svg.setAttribute('role', 'img');
  const line = document.createElementNS(SVG, 'polyline');
  svg.append(line);
  return {
    node: svg,
    update(samples, describe) {
      const first = samples[0];
      const last = samples[samples.length - 1];
      const span = Math.max(last.t - first.t, 1);
      const max = Math.max(1, ...samples.map((s) => s.v));
      // One pixel of margin so a flat line at 0 or at the top stays visible.
      const points = samples
        .map((s) => {
          const x = samples.length === 1 ? WIDTH : ((s.t - first.t) / span) * WIDTH;
          const y = HEIGHT - 1 - (s.v / max) * (HEIGHT - 2);
          return `${x.toFixed(1)},${y.toFixed(1)}`;
        })
        .join(' ');
      if (line.getAttribute('points') !== points) line.setAttribute('points', points);
      const label = describe(first, last, max);
      if (svg.getAttribute('aria-label') !== label) svg.setAttribute('aria-label', label);
    },
  };
}
