// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"fmt"
	"html"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// The picture: three panels side by side, each readable on its own.
//   - The Pareto front: unsafe runs warned in time against safe runs warned,
//     every θ swept as a dot, the front as a line with its θ, the processor's
//     θ and the suggested one marked.
//   - The lead: how many events ahead the unsafe runs were warned, at the
//     suggested θ (or the processor's).
//   - The calibration: each state's P_safe against the share of its groups
//     that stayed safe, a circle's area its number of groups, the diagonal
//     perfect calibration.
const (
	svgPanel  = 380 // a panel's width and height
	svgMargin = 56  // room for the axes' labels
	svgPlot   = svgPanel - 2*svgMargin + 16
	svgTitleY = 24
)

func writeSVGFile(path string, ev *evaluation) error {
	if err := os.WriteFile(path, renderSVG(ev), 0o644); err != nil {
		return fmt.Errorf("--svg: %w", err)
	}
	return nil
}

type svgCanvas struct {
	b      bytes.Buffer
	placed []box // the labels placed so far, which no other may overlap
}

// box is a label's extent on the canvas.
type box struct{ x0, y0, x1, y1 float64 }

func (b box) overlaps(o box) bool { return b.x0 < o.x1 && o.x0 < b.x1 && b.y0 < o.y1 && o.y0 < b.y1 }

// label writes s near (x, y) at the first of a few positions around it
// where it overlaps no label placed before and stays inside the plot;
// false when there is none (the caller says it elsewhere).
func (c *svgCanvas) label(p panel, x, y float64, style, s string) bool {
	w, h := 5.6*float64(len([]rune(s))), 11.0 // about 10px text
	for _, off := range [][2]float64{{6, 14}, {6, -6}, {-6 - w, 14}, {-6 - w, -6}, {6, 26}, {-6 - w, -18}} {
		b := box{x + off[0], y + off[1] - h, x + off[0] + w, y + off[1] + 2}
		if b.x0 < p.x0-svgMargin+4 || b.x1 > p.x(1)+svgMargin-4 || b.y0 < p.y(1) || b.y1 > p.y(0) {
			continue
		}
		if slices.ContainsFunc(c.placed, b.overlaps) {
			continue
		}
		c.placed = append(c.placed, b)
		c.text(b.x0, y+off[1], "start", style, s)
		return true
	}
	return false
}

func (c *svgCanvas) f(format string, args ...any) { fmt.Fprintf(&c.b, format, args...) }

func (c *svgCanvas) text(x, y float64, anchor, style, s string) {
	c.f(`<text x="%.1f" y="%.1f" text-anchor="%s" %s>%s</text>`+"\n", x, y, anchor, style, html.EscapeString(s))
}

// panel is one plot's frame: (x0, y0) its plot area's top left, x and y
// mapping [0, 1] onto it.
type panel struct {
	x0, y0 float64
}

func (p panel) x(v float64) float64 { return p.x0 + v*svgPlot }
func (p panel) y(v float64) float64 { return p.y0 + (1-v)*svgPlot }

// frame draws the axes with ticks at 0, 0.25, ... 1 labelled by label.
func (c *svgCanvas) frame(p panel, title, xLabel, yLabel string, label func(float64) string) {
	c.text(p.x(0.5), svgTitleY, "middle", `font-weight="bold"`, title)
	c.f(`<rect x="%.1f" y="%.1f" width="%d" height="%d" fill="none" stroke="#444"/>`+"\n", p.x0, p.y0, svgPlot, svgPlot)
	for i := 0; i <= 4; i++ {
		v := float64(i) / 4
		c.f(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", p.x(v), p.y(0), p.x(v), p.y(1))
		c.f(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", p.x(0), p.y(v), p.x(1), p.y(v))
		c.text(p.x(v), p.y(0)+16, "middle", `font-size="11"`, label(v))
		c.text(p.x(0)-6, p.y(v)+4, "end", `font-size="11"`, label(v))
	}
	c.text(p.x(0.5), p.y(0)+34, "middle", `font-size="12"`, xLabel)
	c.f(`<text transform="translate(%.1f %.1f) rotate(-90)" text-anchor="middle" font-size="12">%s</text>`+"\n",
		p.x(0)-40, p.y(0.5), html.EscapeString(yLabel))
}

func percent(v float64) string { return fmt.Sprintf("%.0f%%", 100*v) }

func renderSVG(ev *evaluation) []byte {
	var c svgCanvas
	width := 3 * svgPanel
	height := svgPanel + 40
	c.f(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	c.f(`<rect width="100%%" height="100%%" fill="white"/>` + "\n")
	c.text(float64(width)/2, float64(height)-8, "middle", `font-size="11" fill="#555"`,
		fmt.Sprintf("%s, model %s: %d runs (%d unsafe, %d safe)", ev.Processor, filepath.Base(ev.Model), ev.Runs, ev.Unsafe, ev.Safe))
	chosen := ev.chosenPoint()
	c.front(panel{svgMargin, 44}, ev, chosen)
	c.lead(panel{svgPanel + svgMargin, 44}, chosen)
	c.calibration(panel{2*svgPanel + svgMargin, 44}, ev.Calibration)
	c.f("</svg>\n")
	return c.b.Bytes()
}

// chosenPoint is the suggested θ's point, or else the processor's θ's.
func (ev *evaluation) chosenPoint() *sweepPoint {
	if ev.Suggestion != nil {
		return &ev.Suggestion.Point
	}
	return pointAt(ev.Sweep, ev.Configured)
}

// pointAt is the sweep point whose interval holds θ.
func pointAt(points []sweepPoint, theta float64) *sweepPoint {
	for k := range points {
		if theta > points[k].Above && theta <= points[k].UpTo {
			return &points[k]
		}
	}
	return nil
}

// zoom maps a false-alarm rate onto the front's x axis by its square root:
// the useful region, a few per cent, takes a third of the width instead of
// a hundredth.
func zoom(rate float64) float64 { return math.Sqrt(rate) }

// falseAlarmTicks are the x axis's ticks, placed by zoom.
var falseAlarmTicks = []float64{0, 0.01, 0.05, 0.1, 0.25, 0.5, 1}

func (c *svgCanvas) front(p panel, ev *evaluation, chosen *sweepPoint) {
	c.frame(p, "Warned in time against false alarms", "safe runs warned (false alarms), √ scale", "unsafe runs warned in time", percent)
	c.zoomedTicks(p)
	xy := func(s sweepPoint) (float64, float64) {
		return p.x(zoom(rate(s.FalseAlarms, ev.Safe))), p.y(rate(s.Warned, ev.Unsafe))
	}
	var line []string
	for _, s := range ev.Sweep {
		x, y := xy(s)
		if s.Pareto {
			line = append(line, fmt.Sprintf("%.1f,%.1f", x, y))
		} else {
			c.f(`<circle cx="%.1f" cy="%.1f" r="2.5" fill="#bbb"/>`+"\n", x, y)
		}
	}
	c.f(`<polyline points="%s" fill="none" stroke="#1f77b4" stroke-width="2"/>`+"\n", strings.Join(line, " "))
	// The front's θ first, then the dominated points' (grey: another θ warns
	// as many with fewer false alarms), each where there is room; those
	// without room are counted in a note.
	unlabelled := 0
	for _, pareto := range []bool{true, false} {
		for _, s := range ev.Sweep {
			if s.Pareto != pareto || (s.Warned == 0 && s.FalseAlarms == 0) {
				continue
			}
			x, y := xy(s)
			style := `font-size="10" fill="#1f77b4"`
			if pareto {
				c.f(`<circle cx="%.1f" cy="%.1f" r="3.5" fill="#1f77b4"/>`+"\n", x, y)
			} else {
				style = `font-size="10" fill="#999"`
			}
			if !c.label(p, x, y, style, "θ "+formatTheta(s)) {
				unlabelled++
			}
		}
	}
	if unlabelled > 0 {
		c.text(p.x(0)+4, p.y(1)+16, "start", `font-size="10" fill="#999"`, fmt.Sprintf("%d θ not labelled for room (the table has them all); grey: dominated", unlabelled))
	} else {
		c.text(p.x(0)+4, p.y(1)+16, "start", `font-size="10" fill="#999"`, "grey: dominated (another θ warns as many with fewer false alarms)")
	}
	if conf := pointAt(ev.Sweep, ev.Configured); conf != nil {
		x, y := xy(*conf)
		c.f(`<rect x="%.1f" y="%.1f" width="10" height="10" fill="none" stroke="#2ca02c" stroke-width="2"/>`+"\n", x-5, y-5)
		c.text(p.x(1)-4, p.y(0)-22, "end", `font-size="11" fill="#2ca02c"`, fmt.Sprintf("□ configured θ %g", ev.Configured))
	}
	if s := ev.Suggestion; s != nil {
		x, y := xy(s.Point)
		c.f(`<circle cx="%.1f" cy="%.1f" r="8" fill="none" stroke="#d62728" stroke-width="2"/>`+"\n", x, y)
		c.text(p.x(1)-4, p.y(0)-8, "end", `font-size="11" fill="#d62728"`,
			fmt.Sprintf("○ suggested θ %s (false alarms ≤ %s)", formatTheta(s.Point), percent(s.Target)))
	} else if chosen == nil {
		c.text(p.x(1)-4, p.y(0)-8, "end", `font-size="11" fill="#555"`, "no target false-alarm rate given")
	}
}

// zoomedTicks replaces the front's x tick labels with the zoom's.
func (c *svgCanvas) zoomedTicks(p panel) {
	c.f(`<rect x="%.1f" y="%.1f" width="%d" height="20" fill="white"/>`+"\n", p.x(0)-14, p.y(0)+2, svgPlot+28)
	for _, t := range falseAlarmTicks {
		x := p.x(zoom(t))
		c.f(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#444"/>`+"\n", x, p.y(0), x, p.y(0)+4)
		c.text(x, p.y(0)+16, "middle", `font-size="10"`, percent(t))
	}
}

func (c *svgCanvas) lead(p panel, pt *sweepPoint) {
	if pt == nil || len(pt.leads) == 0 {
		c.frame(p, "Lead of the warnings", "events between warning and violation", "unsafe runs", func(float64) string { return "" })
		c.text(p.x(0.5), p.y(0.5), "middle", `fill="#555"`, "no unsafe run warned in time")
		return
	}
	most := 0
	counts := map[int]int{}
	for _, l := range pt.leads {
		counts[l.events]++
		most = max(most, l.events)
	}
	top := 0
	for _, n := range counts {
		top = max(top, n)
	}
	top = (top + 3) / 4 * 4 // whole runs at the four ticks
	c.frame(p, fmt.Sprintf("Lead at θ %s: %d unsafe runs warned", formatTheta(*pt), len(pt.leads)),
		"events between warning and violation", "unsafe runs",
		func(v float64) string { return fmt.Sprintf("%.0f", v*float64(top)) })
	// The x axis holds leads 1..most as bars; its tick labels are replaced.
	c.f(`<rect x="%.1f" y="%.1f" width="%d" height="20" fill="white"/>`+"\n", p.x(0)-4, p.y(0)+2, svgPlot+16)
	bar := float64(svgPlot) / float64(most)
	for l := 1; l <= most; l++ {
		x := p.x0 + float64(l-1)*bar
		h := float64(counts[l]) / float64(top) * svgPlot
		c.f(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#ff7f0e" stroke="white"/>`+"\n", x, p.y(0)-h, bar, h)
		if most <= 20 || l%5 == 0 || l == 1 {
			c.text(x+bar/2, p.y(0)+16, "middle", `font-size="11"`, fmt.Sprint(l))
		}
	}
	if pt.Lead != nil {
		// Spans milliseconds apart (a scripted model) make the lead in
		// seconds noise: it is said only from a second up.
		text := fmt.Sprintf("median %g events", pt.Lead.Events.P50)
		if pt.Lead.Seconds.P50 >= 1 {
			text += fmt.Sprintf(", %.1f s", pt.Lead.Seconds.P50)
		}
		c.text(p.x(1)-4, p.y(1)+16, "end", `font-size="11"`, text)
	}
}

func (c *svgCanvas) calibration(p panel, cal *calibration) {
	c.frame(p, fmt.Sprintf("Calibration: Brier %.3f (base rate %.3f)", cal.Brier, cal.BrierBaseRate),
		"predicted P_safe", "observed share that stayed safe", func(v float64) string { return fmt.Sprintf("%.2g", v) })
	c.f(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#999" stroke-dasharray="4 3"/>`+"\n", p.x(0), p.y(0), p.x(1), p.y(1))
	most := 1
	for _, r := range cal.States {
		most = max(most, r.Groups)
	}
	for _, r := range cal.States {
		rad := 3 + 12*math.Sqrt(float64(r.Groups)/float64(most))
		c.f(`<circle cx="%.1f" cy="%.1f" r="%.1f" fill="#9467bd" fill-opacity="0.45" stroke="#9467bd"><title>%s</title></circle>`+"\n",
			p.x(r.PSafe), p.y(r.Observed), rad,
			html.EscapeString(fmt.Sprintf("%s: P_safe %.3f, %d/%d stayed safe", r.Holding, r.PSafe, r.StayedSafe, r.Groups)))
	}
	for _, r := range cal.States { // each circle's count, where there is room
		c.label(p, p.x(r.PSafe), p.y(r.Observed), `font-size="9" fill="#5b3a8a"`, fmt.Sprintf("%d/%d", r.StayedSafe, r.Groups))
	}
	c.text(p.x(0)+4, p.y(1)+16, "start", `font-size="10" fill="#555"`, "circle area, and label: groups (stayed safe / in the state)")
	c.text(p.x(1)-4, p.y(0)-20, "end", `font-size="10" fill="#555"`, "below the diagonal: optimistic (fewer stayed safe than predicted);")
	c.text(p.x(1)-4, p.y(0)-8, "end", `font-size="10" fill="#555"`, "above it: pessimistic, which costs false alarms")
}
