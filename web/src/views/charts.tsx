// Small SVG charts (no chart library): calls and errors per bucket as bars, latency p50/p95 as lines. The SVG is
// drawn at the width it is shown at (measured), so its labels stay at their CSS size on a phone instead of
// shrinking with a fixed viewBox.
import { type RefObject, useEffect, useRef, useState } from "react";
import type { ActivityBucket, ActivityFigures } from "../types.js";

type Point = ActivityFigures & { start: string };
/** The drawing width before the figure is measured (and where ResizeObserver is missing). */
const DEFAULT_WIDTH = 720;
const MIN_WIDTH = 260;
const MAX_WIDTH = 900;
const HEIGHT = 200;
/** Room each time label needs, so labels never overlap. */
const LABEL_SPACE = 90;
const PAD = { left: 48, right: 12, top: 12, bottom: 28 };

function niceMax(value: number): number {
  if (value <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 5, 10]) if (value <= step * power) return step * power;
  return 10 * power;
}

/** The width a figure is shown at, in CSS pixels, kept up to date as the window resizes. */
function useDrawWidth(): [RefObject<HTMLElement | null>, number] {
  const ref = useRef<HTMLElement | null>(null);
  const [width, setWidth] = useState(DEFAULT_WIDTH);
  useEffect(() => {
    const element = ref.current;
    if (!element || typeof ResizeObserver === "undefined") return;
    const measure = () => {
      const shown = Math.round(element.getBoundingClientRect().width);
      if (shown > 0) setWidth(Math.min(MAX_WIDTH, Math.max(MIN_WIDTH, shown)));
    };
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(element);
    return () => observer.disconnect();
  }, []);
  return [ref, width];
}

/** An axis value: whole numbers as they are, a half step (2.5 of a max of 5) with one decimal, never rounded up. */
function axisNumber(value: number): string {
  return Number.isInteger(value) ? String(value) : value.toFixed(1);
}

function tickLabel(iso: string, bucket: ActivityBucket): string {
  const date = new Date(iso);
  if (bucket === "day") return date.toLocaleDateString("en", { month: "short", day: "numeric" });
  return date.toLocaleTimeString("en", { hour: "2-digit", minute: "2-digit", hour12: false });
}

function Axes({
  width,
  max,
  series,
  bucket,
  unit,
}: {
  width: number;
  max: number;
  series: Point[];
  bucket: ActivityBucket;
  unit: string;
}) {
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const plotW = width - PAD.left - PAD.right;
  const labels = Math.max(2, Math.floor(plotW / LABEL_SPACE));
  const every = Math.max(1, Math.ceil(series.length / labels));
  return (
    <g className="axes">
      {[0, 0.5, 1].map((f) => (
        <g key={f}>
          <line
            x1={PAD.left}
            x2={width - PAD.right}
            y1={PAD.top + plotH * (1 - f)}
            y2={PAD.top + plotH * (1 - f)}
          />
          <text x={PAD.left - 6} y={PAD.top + plotH * (1 - f) + 4} textAnchor="end">
            {axisNumber(max * f)}
            {f === 1 ? unit : ""}
          </text>
        </g>
      ))}
      {series.map((point, index) =>
        index % every === 0 ? (
          <text
            key={point.start}
            x={PAD.left + (plotW * (index + 0.5)) / Math.max(1, series.length)}
            y={HEIGHT - 8}
            textAnchor="middle"
          >
            {tickLabel(point.start, bucket)}
          </text>
        ) : null,
      )}
    </g>
  );
}

export function CallsChart({
  series,
  bucket,
  summary,
}: {
  series: Point[];
  bucket: ActivityBucket;
  summary: string;
}) {
  const [ref, width] = useDrawWidth();
  const max = niceMax(Math.max(0, ...series.map((point) => point.calls)));
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const slot = (width - PAD.left - PAD.right) / Math.max(1, series.length);
  const barW = Math.max(1, slot * 0.8);
  return (
    <figure className="chart" ref={ref}>
      <svg viewBox={`0 0 ${width} ${HEIGHT}`} role="img" aria-label={`Tool calls over time: ${summary}`}>
        <Axes width={width} max={max} series={series} bucket={bucket} unit="" />
        {series.map((point, index) => {
          const x = PAD.left + slot * index + (slot - barW) / 2;
          const callsH = (plotH * point.calls) / max;
          const errorsH = (plotH * point.errors) / max;
          return (
            <g key={point.start}>
              <rect className="bar-calls" x={x} y={PAD.top + plotH - callsH} width={barW} height={callsH} />
              <rect
                className="bar-errors"
                x={x}
                y={PAD.top + plotH - errorsH}
                width={barW}
                height={errorsH}
              />
            </g>
          );
        })}
      </svg>
      <figcaption>
        Tool calls over time <span className="legend legend-calls">calls</span>{" "}
        <span className="legend legend-errors">errors</span>
      </figcaption>
    </figure>
  );
}

export function LatencyChart({ series, bucket }: { series: Point[]; bucket: ActivityBucket }) {
  const [ref, width] = useDrawWidth();
  const max = niceMax(Math.max(0, ...series.map((point) => point.p95_ms)));
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const slot = (width - PAD.left - PAD.right) / Math.max(1, series.length);
  const line = (pick: (point: Point) => number) =>
    series
      .map(
        (point, index) =>
          `${PAD.left + slot * (index + 0.5)},${PAD.top + plotH - (plotH * pick(point)) / max}`,
      )
      .join(" ");
  const worstP95 = Math.max(0, ...series.map((point) => point.p95_ms));
  return (
    <figure className="chart" ref={ref}>
      <svg
        viewBox={`0 0 ${width} ${HEIGHT}`}
        role="img"
        aria-label={`Latency per ${bucket}: p50 and p95 in milliseconds, highest p95 ${worstP95} ms`}
      >
        <Axes width={width} max={max} series={series} bucket={bucket} unit=" ms" />
        <polyline className="line-p50" points={line((point) => point.p50_ms)} />
        <polyline className="line-p95" points={line((point) => point.p95_ms)} />
      </svg>
      <figcaption>
        Latency <span className="legend legend-p50">p50</span> <span className="legend legend-p95">p95</span>
      </figcaption>
    </figure>
  );
}
