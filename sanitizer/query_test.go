package sanitizer_test

import (
	"testing"

	"github.com/mcpbridge/mcpbridge/sanitizer"
)

// TestQueryPairs: the value of a URL query or fragment pair, a cookie list
// entry or a connection-string part whose name is a sensitive key is
// masked, as the same name's value is in JSON; other pairs, paging
// cursors and the signatures of pre-signed URLs stay readable.
func TestQueryPairs(t *testing.T) {
	r := newRedactor(t, sanitizer.Rules{})
	const m = testMask
	tests := []struct{ name, in, want string }{
		{"access_token", "https://x.example/cb?access_token=Zx9Qw8Er7Ty6Ui5Op4&state=1",
			"https://x.example/cb?access_token=" + m + "&state=1"},
		{"fragment", "https://x.example/cb#access_token=Zx9Qw8Er7Ty6Ui5Op4&token_type=bearer&expires_in=3600",
			"https://x.example/cb#access_token=" + m + "&token_type=bearer&expires_in=3600"},
		{"api_key later", "GET /v1/items?page=2&api_key=Zx9Qw8Er7Ty6Ui5Op4 HTTP/1.1",
			"GET /v1/items?page=2&api_key=" + m + " HTTP/1.1"},
		{"client_secret and password", "?client_secret=c5%2Bx&password=hunter2#top",
			"?client_secret=" + m + "&password=" + m + "#top"},
		{"html escaped ampersand", `<a href="https://a/b?x=1&amp;token=abc123&amp;y=2">`,
			`<a href="https://a/b?x=1&amp;token=` + m + `&amp;y=2">`},
		{"markdown link", "see [it](https://a/b?token=abc123) now", "see [it](https://a/b?token=" + m + ") now"},
		{"no space after ;", "a=1;session_token=xyz123;Path=/", "a=1;session_token=" + m + ";Path=/"},
		{"azure connection string", "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=AbCd+Ef/Gh==;EndpointSuffix=core.windows.net",
			"DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=" + m + ";EndpointSuffix=core.windows.net"},
		{"ado connection string", "Server=tcp:db;Database=d;User ID=u;Password=Hunter2Secret!;",
			"Server=tcp:db;Database=d;User ID=u;Password=" + m + ";"},
		{"already masked", "?token=" + m + "&a=1", "?token=" + m + "&a=1"},
		{"empty value", "?token=&a=1", "?token=&a=1"},
		// Percent-encoding does not hide a pair: a name with encoded
		// bytes, an encoded '=', and a whole pair inside another URL's
		// query (every delimiter encoded), whose value ends at the next
		// encoded '&'.
		{"encoded underscore", "https://h.example/x?api%5Fkey=Zx9Qw8Er7Ty6&page=2", "https://h.example/x?api%5Fkey=" + m + "&page=2"},
		{"encoded underscore lower hex", "?access%5ftoken=Zx9Qw8Er7Ty6", "?access%5ftoken=" + m},
		{"encoded first letter", "?a=1&%74oken=Zx9Qw8Er7Ty6", "?a=1&%74oken=" + m},
		{"encoded equals", "?api_key%3DZx9Qw8Er7Ty6&a=1", "?api_key%3D" + m + "&a=1"},
		{"url in a url", "https://a.example/login?next=https%3A%2F%2Fh.example%2Fcb%3Faccess_token%3DZx9Qw8Er7Ty6%26page%3D2&x=1",
			"https://a.example/login?next=https%3A%2F%2Fh.example%2Fcb%3Faccess_token%3D" + m + "%26page%3D2&x=1"},
		{"url in a url lower hex", "r=%2fcb%3fa%3d1%26client_secret%3dZx9Qw8Er7Ty6%23frag", "r=%2fcb%3fa%3d1%26client_secret%3d" + m + "%23frag"},
		{"encoded pair not sensitive", "?next=%2Fcb%3Fpage%3D2%26cursor%3Dabc&api%5Fversion=3", "?next=%2Fcb%3Fpage%3D2%26cursor%3Dabc&api%5Fversion=3"},
		{"encoded non-name byte", "?api%20key=abc", "?api%20key=abc"},

		{"ordinary pairs", "https://api.example.com/v1/x?page=2&cursor=abc123def456&id=42&q=token%3Dx",
			"https://api.example.com/v1/x?page=2&cursor=abc123def456&id=42&q=token%3Dx"},
		{"paging and metadata", "?nextPageToken=abc&pageToken=def&token_type=bearer&max_tokens=100&key=obj/a.txt",
			"?nextPageToken=abc&pageToken=def&token_type=bearer&max_tokens=100&key=obj/a.txt"},
		{"pre-signed signatures", "https://acct.blob.core.windows.net/c/b?sv=2022-11-02&sig=AbCd%2BEf&se=2026-01-01",
			"https://acct.blob.core.windows.net/c/b?sv=2022-11-02&sig=AbCd%2BEf&se=2026-01-01"},
		{"prose", "Q&A: tokens; secrets? #hashtag", "Q&A: tokens; secrets? #hashtag"},
		{"json pointer", "#/components/schemas/token=x", "#/components/schemas/token=x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := r.RedactString(tt.in); got != tt.want {
				t.Errorf("RedactString(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}

	// The same in a JSON answer, an escaped JSON string and a text body.
	for _, c := range []struct{ mt, in, want string }{
		{"application/json", `{"next":"https://x/cb?access_token=Zx9Qw8Er7Ty6&state=1"}`,
			`{"next":"https://x/cb?access_token=` + m + `&state=1"}`},
		{"application/json", `{"next":"https://x/cb?a=\u00e9\u0026access_token=Zx9Qw8Er7Ty6"}`,
			`{"next":"https://x/cb?a=é\u0026access_token=` + m + `"}`},
		{"text/plain", "redirecting to https://x/cb?api_key=Zx9Qw8Er7Ty6&x=1\n",
			"redirecting to https://x/cb?api_key=" + m + "&x=1\n"},
	} {
		got, _ := r.RedactBody(c.mt, []byte(c.in))
		if string(got) != c.want {
			t.Errorf("RedactBody(%s, %s)\n got %s\nwant %s", c.mt, c.in, got, c.want)
		}
	}
}

// TestVendorTokens: well-known token formats are masked without being
// configured; look-alikes are not.
func TestVendorTokens(t *testing.T) {
	r := newRedactor(t, sanitizer.Rules{})
	const m = testMask
	for _, tok := range []string{
		"sk_live_51H8xYzAbCdEfGhIjKlMnOpQrStUvWx",
		"sk_test_51H8xYzAbCdEfGhIjKlMnOpQrStUvWx",
		"rk_live_51H8xYzAbCdEfGhIjKlMnOpQrStUvWx",
		"AIzaSyDaGmWKa4JsXZ-HjGw7ISLn_3namBGewQe",
		"npm_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
		"glpat-AbCdEfGhIjKlMnOpQr12",
	} {
		if got := r.RedactString("key: " + tok + "."); got != "key: "+m+"." {
			t.Errorf("RedactString(%q) = %q", "key: "+tok+".", got)
		}
		if got, _ := r.RedactBody("application/json", []byte(`{"x":"`+tok+`"}`)); string(got) != `{"x":"`+m+`"}` {
			t.Errorf("RedactBody(%q) = %s", tok, got)
		}
	}
	for _, s := range []string{
		"task_live_mode", "desk_test_runner_0123456789abcdefgh", "sk_live_short",
		"AIzaSyDaGmWKa4JsXZ-HjGw7ISLn_3namBGew",                  // 33 after AIza
		"npm_install", "npm_AbCdEfGhIjKlMnOpQrStUvWxYz012345678", // 35
		"glpat-short", "MAIzaSyDaGmWKa4JsXZ-HjGw7ISLn_3namBGewQe",
	} {
		if got := r.RedactString(s); got != s {
			t.Errorf("RedactString(%q) = %q, want it unchanged", s, got)
		}
	}
}
