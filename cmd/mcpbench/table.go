package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// print writes the human-readable report: every measurement, then the
// issue's targets with PASS or MISS.
func (r *report) print(w io.Writer) {
	e := r.Env
	mode := "full"
	if e.Short {
		mode = "short"
	}
	fmt.Fprintf(w, "mcpbench (%s mode): %s · %s %s/%s · %d CPUs · load %s → %s\n",
		mode, e.BridgeVersion, e.GoVersion, e.OS, e.Arch, e.NumCPU, e.LoadStart, e.LoadEnd)
	schemas := "with response schemas (bridge validates and sends structuredContent)"
	if !e.OutputSchemas {
		schemas = "without response schemas"
	}
	fmt.Fprintf(w, "bridge %s; spec %s\n", e.Bridge, schemas)
	var bodies []string
	for _, ep := range r.Endpoints {
		s := fmt.Sprintf("%s %s", ep.Size, fmtBytes(ep.UpstreamBytes))
		if ep.Pretty {
			s += fmt.Sprintf(" (compact %s)", fmtBytes(ep.CompactBytes))
		}
		bodies = append(bodies, s)
	}
	fmt.Fprintf(w, "upstream bodies: %s\n", strings.Join(bodies, ", "))

	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	section := func(title string) {
		tw.Flush() //nolint:errcheck // stdout
		fmt.Fprintf(w, "\n%s\n", title)
	}

	if len(r.Latency) > 0 {
		section(fmt.Sprintf("Latency, sequential calls interleaved round-robin (%d rounds)", e.Rounds))
		fmt.Fprintln(tw, "size\ttarget\tcalls\tp50\tp90\tp99\toverhead p50\tvs floor\tvs floor+sc\tserver CPU/call\t")
		for _, l := range r.Latency {
			over, ratio, ratioSC := "-", "-", "-"
			if l.Target != tDirect {
				over = "+" + fmtUs(l.Overhead)
			}
			if tr, ok := strings.CutPrefix(l.Target, "bridge/"); ok {
				if fl, ok := r.latencyOf("floor/"+tr, l.Size); ok && fl.Overhead > 0 {
					ratio = fmt.Sprintf("%.2fx", l.Overhead/fl.Overhead)
				}
				if fl, ok := r.latencyOf("floor+sc/"+tr, l.Size); ok && fl.Overhead > 0 {
					ratioSC = fmt.Sprintf("%.2fx", l.Overhead/fl.Overhead)
				}
			}
			cpu := "-"
			if l.CPUPerCall > 0 {
				cpu = fmtUs(l.CPUPerCall)
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", l.Size, l.Target, l.N, fmtUs(l.P50), fmtUs(l.P90), fmtUs(l.P99), over, ratio, ratioSC, cpu)
		}
	}

	if len(r.Throughput) > 0 {
		section(fmt.Sprintf("Throughput, calls/s (%s per cell)", fmtMs(e.DurationMs)))
		fmt.Fprintln(tw, "size\ttarget\tc=1\tc=8\tc=32\t")
		seen := map[string]bool{}
		for _, t := range r.Throughput {
			key := t.Size + "|" + t.Target
			if seen[key] {
				continue
			}
			seen[key] = true
			row := []string{t.Size, t.Target}
			for _, c := range []int{1, 8, 32} {
				cell := "-"
				if x, ok := r.throughputOf(t.Target, t.Size, c); ok {
					cell = fmt.Sprintf("%.0f", x.PerSecond)
				}
				row = append(row, cell)
			}
			fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
		}
	}

	if len(r.Results) > 0 {
		section("Result bytes (text = what the model reads; result = the whole CallToolResult JSON)")
		fmt.Fprintln(tw, "size\ttarget\tupstream\ttext\tresult\tstructured\ttext is\t")
		for _, res := range r.Results {
			is := "modified"
			switch {
			case res.EqualsUpstream:
				is = "verbatim"
			case res.EqualsCompact:
				is = "compacted"
			}
			if res.From == "structuredContent" {
				is += " (structuredContent)"
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%v\t%s\t\n", res.Size, res.Target, res.UpstreamBytes, res.TextBytes, res.ResultBytes, res.Structured, is)
		}
	}

	if len(r.Memory) > 0 {
		section("Server memory, VmRSS / VmHWM (peak)")
		var whens []string
		byTarget := map[string]map[string]memSample{}
		var order []string
		for _, m := range r.Memory {
			if byTarget[m.Target] == nil {
				byTarget[m.Target] = map[string]memSample{}
				order = append(order, m.Target)
			}
			if !slices.Contains(whens, m.When) {
				whens = append(whens, m.When)
			}
			byTarget[m.Target][m.When] = m.memSample
		}
		fmt.Fprintln(tw, "target\t"+strings.Join(whens, "\t")+"\t")
		for _, t := range order {
			row := []string{t}
			for _, wh := range whens {
				m := byTarget[t][wh]
				row = append(row, fmt.Sprintf("%s / %s", fmtKiB(m.RSSKiB), fmtKiB(m.HWMKiB)))
			}
			fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
		}
	}

	if len(r.ColdStart) > 0 {
		section(fmt.Sprintf("Cold start: spawn → initialize → tools/list over stdio (median of %d)", e.ColdRuns))
		fmt.Fprintln(tw, "case\tmode\tmedian\tmin\tmax\tlast byte\ttools\ttools/list\tRSS at list\tidle RSS\tpeak RSS\t")
		for _, c := range r.ColdStart {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t\n", c.Case, c.Mode, fmtMs(c.MedianMs), fmtMs(c.MinMs), fmtMs(c.MaxMs), fmtMs(c.WireMedianMs),
				c.Tools, fmtBytes(c.ListBytes), fmtKiB(c.AtListRSSKiB), fmtKiB(c.IdleRSSKiB), fmtKiB(c.PeakRSSKiB))
		}
	}
	tw.Flush() //nolint:errcheck // stdout

	fmt.Fprintf(w, "\nTargets\n")
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "target\tlimit\tmeasured\tstatus")
	pass, miss := 0, 0
	for _, t := range r.Targets {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", t.Target, t.Limit, t.Measured, t.Status)
		switch t.Status {
		case "PASS":
			pass++
		case "MISS":
			miss++
		}
	}
	tw.Flush() //nolint:errcheck // stdout
	fmt.Fprintf(w, "%d PASS, %d MISS, %d SKIP\n", pass, miss, len(r.Targets)-pass-miss)
	for _, msg := range r.Errors {
		fmt.Fprintf(w, "error: %s\n", msg)
	}
}

func fmtBytes(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	default:
		return fmt.Sprintf("%d B", n)
	}
}

func fmtKiB(k int64) string {
	if k == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f MiB", float64(k)/1024)
}
