package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"strconv"
	"time"
)

// Texts the conformance scenarios describe; the bridge passes them on.
const (
	simpleText   = "This is a simple text response for testing."
	errorText    = "This tool intentionally returns an error for testing"
	loggingText  = "Tool with logging executed successfully"
	progressText = "Tool with progress executed successfully"
	mixedText    = "Multiple content types test:"
	staticText   = "This is the content of the static text resource."
)

// handlerOptions tunes the API for tests.
type handlerOptions struct {
	// StepDelay is the pause between the chunks of the slow routes
	// (/logging, /logging-tool, /progress). 0 means 50ms, the pace the scenarios describe.
	StepDelay time.Duration
}

// newHandler returns the API described by testdata/conformance/openapi.yaml.
func newHandler(opts handlerOptions) http.Handler {
	if opts.StepDelay == 0 {
		opts.StepDelay = 50 * time.Millisecond
	}
	pngBody, wavBody, pdfBody := redPixelPNG(), silenceWAV(), minimalPDF()
	mixedType, mixed := mixedBody()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /simple-text", func(w http.ResponseWriter, _ *http.Request) {
		write(w, http.StatusOK, "text/plain; charset=utf-8", []byte(simpleText))
	})
	mux.HandleFunc("GET /image", func(w http.ResponseWriter, _ *http.Request) {
		write(w, http.StatusOK, "image/png", pngBody)
	})
	mux.HandleFunc("GET /audio", func(w http.ResponseWriter, _ *http.Request) {
		write(w, http.StatusOK, "audio/wav", wavBody)
	})
	mux.HandleFunc("GET /embedded-resource", func(w http.ResponseWriter, _ *http.Request) {
		write(w, http.StatusOK, "application/pdf", pdfBody)
	})
	mux.HandleFunc("GET /error", func(w http.ResponseWriter, _ *http.Request) {
		write(w, http.StatusInternalServerError, "text/plain; charset=utf-8", []byte(errorText))
	})
	mux.HandleFunc("GET /multiple-content-types", func(w http.ResponseWriter, _ *http.Request) {
		write(w, http.StatusOK, mixedType, mixed)
	})
	mux.HandleFunc("GET /logging", func(w http.ResponseWriter, r *http.Request) {
		slow(w, r, opts.StepDelay, loggingText)
	})
	mux.HandleFunc("GET /logging-tool", func(w http.ResponseWriter, r *http.Request) {
		slow(w, r, opts.StepDelay, loggingText)
	})
	mux.HandleFunc("GET /progress", func(w http.ResponseWriter, r *http.Request) {
		slow(w, r, opts.StepDelay, progressText)
	})
	mux.HandleFunc("POST /json-schema-2020-12", func(w http.ResponseWriter, r *http.Request) {
		echoJSON(w, r)
	})
	// The resources (whitelist resource entries): test://static-text and
	// test://template/{id}/data; test://static-binary is GET /image.
	mux.HandleFunc("GET /static-text", func(w http.ResponseWriter, _ *http.Request) {
		write(w, http.StatusOK, "text/plain; charset=utf-8", []byte(staticText))
	})
	mux.HandleFunc("GET /template/{id}/data", func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		body, _ := json.Marshal(map[string]any{"id": id, "templateTest": true, "data": "Data for ID: " + id}) // plain data
		write(w, http.StatusOK, "application/json", body)
	})
	return mux
}

func write(w http.ResponseWriter, status int, contentType string, body []byte) {
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// slow sends text in three flushed chunks StepDelay apart, with a
// Content-Length, the way a long download arrives: a bridge can report
// progress from it.
func slow(w http.ResponseWriter, r *http.Request, step time.Duration, text string) {
	third := len(text) / 3
	chunks := []string{text[:third], text[third : 2*third], text[2*third:]}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(text)))
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	for i, c := range chunks {
		if i > 0 {
			t := time.NewTimer(step)
			select {
			case <-r.Context().Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
		_, _ = w.Write([]byte(c))
		_ = rc.Flush()
	}
}

// echoJSON answers with the query and body it received.
func echoJSON(w http.ResponseWriter, r *http.Request) {
	var body any
	if r.ContentLength != 0 {
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&body); err != nil {
			write(w, http.StatusBadRequest, "application/json", []byte(`{"error":"body is not JSON"}`))
			return
		}
	}
	out, _ := json.Marshal(map[string]any{"query": r.URL.Query(), "body": body})
	write(w, http.StatusOK, "application/json", out)
}

// redPixelPNG is a 1x1 red PNG.
func redPixelPNG() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 1, 1))
	img.Set(0, 0, color.RGBA{R: 255, A: 255})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		panic(err) // encoding to memory cannot fail
	}
	return buf.Bytes()
}

// silenceWAV is 0.1 s of 8 kHz mono 16-bit PCM silence.
func silenceWAV() []byte {
	const rate, samples = 8000, 800
	data := make([]byte, samples*2)
	var buf bytes.Buffer
	buf.WriteString("RIFF")
	_ = binary.Write(&buf, binary.LittleEndian, uint32(36+len(data)))
	buf.WriteString("WAVEfmt ")
	for _, v := range []any{uint32(16), uint16(1), uint16(1), uint32(rate), uint32(rate * 2), uint16(2), uint16(16)} {
		_ = binary.Write(&buf, binary.LittleEndian, v)
	}
	buf.WriteString("data")
	_ = binary.Write(&buf, binary.LittleEndian, uint32(len(data)))
	buf.Write(data)
	return buf.Bytes()
}

// minimalPDF is a one-page PDF document: a binary document type the bridge
// hands on as an embedded resource.
func minimalPDF() []byte {
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 72 72] >>",
	}
	var buf bytes.Buffer
	buf.WriteString("%PDF-1.4\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = buf.Len()
		fmt.Fprintf(&buf, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := buf.Len()
	fmt.Fprintf(&buf, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&buf, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&buf, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return buf.Bytes()
}

// mixedBody is a multipart/mixed document with a text, an image and a JSON
// part: the three content types tools-call-mixed-content asks for, as an
// HTTP API would send them.
func mixedBody() (string, []byte) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	parts := []struct {
		ct   string
		body []byte
	}{
		{"text/plain; charset=utf-8", []byte(mixedText)},
		{"image/png", redPixelPNG()},
		{"application/json", []byte(`{"test":"data","value":123}`)},
	}
	for _, p := range parts {
		pw, err := mw.CreatePart(textproto.MIMEHeader{"Content-Type": {p.ct}})
		if err != nil {
			panic(err) // writing to memory cannot fail
		}
		_, _ = pw.Write(p.body)
	}
	_ = mw.Close()
	return "multipart/mixed; boundary=" + mw.Boundary(), buf.Bytes()
}
