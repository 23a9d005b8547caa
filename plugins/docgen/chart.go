package main

import (
	"bytes"
	"fmt"
	"math"
	"strings"

	chart "github.com/wcharczuk/go-chart/v2"
)

// Series is one named row of values, one per label.
type Series struct {
	Name   string    `json:"name,omitempty"`
	Values []float64 `json:"values" minItems:"1"`
}

// ChartArgs are createChart's arguments.
type ChartArgs struct {
	Type     string   `json:"type" description:"bar, line or pie" enum:"bar,line,pie"`
	Title    string   `json:"title,omitempty"`
	Labels   []string `json:"labels" description:"one label per value (the categories or x positions)" minItems:"1" maxItems:"1000"`
	Series   []Series `json:"series" description:"the data: one series for bar and pie charts, one or more for line charts" minItems:"1" maxItems:"20"`
	Width    int      `json:"width,omitempty" description:"pixels, default 800" minimum:"0" maximum:"4000"`
	Height   int      `json:"height,omitempty" description:"pixels, default 500" minimum:"0" maximum:"4000"`
	XLabel   string   `json:"xLabel,omitempty" description:"x axis name (line charts)"`
	YLabel   string   `json:"yLabel,omitempty" description:"y axis name (bar and line charts)"`
	FileName string   `json:"fileName,omitempty" description:"name of the PNG file (default from the title)"`
}

// renderChart draws the chart as a PNG with go-chart.
func renderChart(a ChartArgs) ([]byte, int, int, error) {
	w, h := a.Width, a.Height
	if w == 0 {
		w = 800
	}
	if h == 0 {
		h = 500
	}
	if w < 100 || h < 100 {
		return nil, 0, 0, fmt.Errorf("a chart needs at least 100x100 pixels, not %dx%d", w, h)
	}
	if len(a.Series) == 0 || len(a.Labels) == 0 {
		return nil, 0, 0, fmt.Errorf("a chart needs labels and at least one series")
	}
	for i, s := range a.Series {
		if len(s.Values) != len(a.Labels) {
			return nil, 0, 0, fmt.Errorf("series[%d] (%s) has %d values for %d labels", i, s.Name, len(s.Values), len(a.Labels))
		}
		for j, v := range s.Values {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, 0, 0, fmt.Errorf("series[%d].values[%d] is not a number", i, j)
			}
		}
	}
	var buf bytes.Buffer
	var err error
	title := strings.TrimSpace(a.Title)
	switch a.Type {
	case "bar":
		if len(a.Series) != 1 {
			return nil, 0, 0, fmt.Errorf("a bar chart takes one series, not %d: use a line chart to compare series", len(a.Series))
		}
		bars := make([]chart.Value, len(a.Labels))
		allZero := true
		for i, l := range a.Labels {
			bars[i] = chart.Value{Label: l, Value: a.Series[0].Values[i]}
			allZero = allZero && a.Series[0].Values[i] == 0
		}
		if allZero {
			return nil, 0, 0, fmt.Errorf("every value is 0: nothing to draw")
		}
		// The value axis starts at 0 (or below the lowest negative value):
		// go-chart would otherwise start it at the smallest bar, which
		// then looks like nothing.
		lo, hi := 0.0, 0.0
		for _, v := range a.Series[0].Values {
			lo, hi = min(lo, v), max(hi, v)
		}
		bc := chart.BarChart{Title: title, Width: w, Height: h, Bars: bars,
			Background: chart.Style{Padding: chart.Box{Top: 40, Left: 10, Right: 10, Bottom: 30}},
			YAxis:      chart.YAxis{Name: a.YLabel, Range: &chart.ContinuousRange{Min: lo * 1.1, Max: hi * 1.1}},
			BarWidth:   max(4, (w-120)/len(bars)*2/3), BarSpacing: max(2, (w-120)/len(bars)/3),
			UseBaseValue: lo < 0}
		err = bc.Render(chart.PNG, &buf)
	case "line":
		xs := make([]float64, len(a.Labels))
		ticks := make([]chart.Tick, len(a.Labels))
		for i, l := range a.Labels {
			xs[i] = float64(i)
			ticks[i] = chart.Tick{Value: float64(i), Label: l}
		}
		var series []chart.Series
		for i, s := range a.Series {
			name := s.Name
			if name == "" {
				name = fmt.Sprintf("series %d", i+1)
			}
			series = append(series, chart.ContinuousSeries{Name: name, XValues: xs, YValues: s.Values,
				Style: chart.Style{StrokeWidth: 2, StrokeColor: chart.GetDefaultColor(i), DotWidth: 3, DotColor: chart.GetDefaultColor(i)}})
		}
		if len(xs) == 1 {
			// One point has no range; go-chart needs two x values.
			return nil, 0, 0, fmt.Errorf("a line chart needs at least two labels")
		}
		c := chart.Chart{Title: title, Width: w, Height: h, Series: series,
			Background: chart.Style{Padding: chart.Box{Top: 50, Left: 20, Right: 20, Bottom: 20}},
			XAxis:      chart.XAxis{Name: a.XLabel, Ticks: ticks},
			YAxis:      chart.YAxis{Name: a.YLabel}}
		if len(series) > 1 {
			c.Elements = []chart.Renderable{chart.Legend(&c)}
		}
		err = c.Render(chart.PNG, &buf)
	case "pie":
		if len(a.Series) != 1 {
			return nil, 0, 0, fmt.Errorf("a pie chart takes one series, not %d", len(a.Series))
		}
		vals := make([]chart.Value, len(a.Labels))
		sum := 0.0
		for i, l := range a.Labels {
			v := a.Series[0].Values[i]
			if v < 0 {
				return nil, 0, 0, fmt.Errorf("a pie chart cannot show the negative value %g (%s)", v, l)
			}
			sum += v
			vals[i] = chart.Value{Label: l, Value: v}
		}
		if sum == 0 {
			return nil, 0, 0, fmt.Errorf("every value is 0: nothing to draw")
		}
		err = chart.PieChart{Title: title, Width: w, Height: h, Values: vals}.Render(chart.PNG, &buf)
	default:
		return nil, 0, 0, fmt.Errorf("unknown chart type %q (want bar, line or pie)", a.Type)
	}
	if err != nil {
		return nil, 0, 0, fmt.Errorf("drawing the chart: %w", err)
	}
	return buf.Bytes(), w, h, nil
}
