// The console's stylesheet, served at /-/console.css: a string, as console-script.ts says why.
export const CONSOLE_STYLE = `:root {
  color-scheme: light dark;
  --text: #1d2330;
  --muted: #5b6472;
  --line: #d9dde4;
  --panel: #f5f6f8;
  --accent: #1f5fbf;
  --ok: #1b7a3a;
  --ok-bg: #e6f4ea;
  --warn: #8a5a00;
  --warn-bg: #fff4d6;
  --bad: #a3221b;
  --bad-bg: #fde8e6;
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  color: var(--text);
  background: #fff;
}
@media (prefers-color-scheme: dark) {
  :root {
    --text: #e4e7ec; --muted: #a0a8b5; --line: #3a404b; --panel: #22262d; --accent: #7fb0ff;
    --ok: #7fd49a; --ok-bg: #17301f; --warn: #f0c060; --warn-bg: #33290f; --bad: #ff9c94; --bad-bg: #3a1c1a;
    background: #16191e;
  }
}
body { margin: 0 auto; max-width: 72rem; padding: 0 1.25rem 2rem; }
header { display: flex; flex-wrap: wrap; align-items: baseline; justify-content: space-between; gap: 0.5rem 2rem; border-bottom: 1px solid var(--line); }
h1 { font-size: 1.4rem; margin: 1rem 0 0.75rem; }
h2 { font-size: 1.15rem; margin: 2rem 0 0.75rem; }
h3 { font-size: 1rem; margin: 1rem 0 0.5rem; }
.aside, .ago, footer { color: var(--muted); font-weight: normal; }
nav ul { display: flex; gap: 1rem; list-style: none; margin: 0; padding: 0; }
a { color: var(--accent); }
code, kbd { font: 0.9em ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; overflow-wrap: anywhere; }
kbd { background: var(--panel); border: 1px solid var(--line); border-radius: 4px; padding: 0.05rem 0.3rem; }
.banner { border-radius: 6px; padding: 0.6rem 0.9rem; }
.banner.ok { background: var(--ok-bg); color: var(--ok); }
.banner.warn { background: var(--warn-bg); color: var(--warn); }
.banner.bad { background: var(--bad-bg); color: var(--bad); }
.bad-text { color: var(--bad); }
.warn-text { color: var(--warn); }
.facts { display: grid; grid-template-columns: max-content 1fr; gap: 0.3rem 1.25rem; margin: 1rem 0; }
.facts dt { color: var(--muted); }
.facts dd { margin: 0; }
table { border-collapse: collapse; margin: 0.5rem 0; }
caption { text-align: left; font-weight: 600; padding-bottom: 0.3rem; }
th, td { border-bottom: 1px solid var(--line); padding: 0.3rem 1rem 0.3rem 0; text-align: left; }
td.number { text-align: right; font-variant-numeric: tabular-nums; }
tr.differs td { color: var(--warn); }
.next-step { background: var(--warn-bg); border-left: 4px solid var(--warn); padding: 0.25rem 1rem; border-radius: 0 6px 6px 0; }
.next-step h3 { margin-top: 0.5rem; }
.refusals { list-style: none; padding: 0; }
.refusal { border: 1px solid var(--line); border-left-width: 4px; border-radius: 6px; padding: 0.25rem 1rem; margin-bottom: 0.75rem; }
.refusal.current { border-left-color: var(--bad); }
.refusal.fixed { border-left-color: var(--ok); }
.refusal-head { font-weight: 600; }
.badge { display: inline-block; font-size: 0.8rem; font-weight: normal; border-radius: 999px; padding: 0 0.6rem; margin-left: 0.4rem; }
.current .badge { background: var(--bad-bg); color: var(--bad); }
.fixed .badge { background: var(--ok-bg); color: var(--ok); }
.problems { padding-left: 1.25rem; }
.problems li { margin: 0.2rem 0; }
form { display: flex; flex-wrap: wrap; align-items: end; gap: 0.75rem 1.25rem; background: var(--panel); padding: 0.75rem 1rem; border-radius: 6px; }
label { display: flex; flex-direction: column; font-size: 0.85rem; color: var(--muted); gap: 0.2rem; }
input, select, button { font: inherit; color: var(--text); background: Canvas; border: 1px solid var(--line); border-radius: 4px; padding: 0.3rem 0.5rem; }
input[name="limit"] { width: 5rem; }
button { cursor: pointer; }
button[type="submit"] { background: var(--accent); border-color: var(--accent); color: #fff; }
button:disabled { cursor: default; opacity: 0.45; }
.pager { display: flex; align-items: center; gap: 1rem; margin: 1rem 0; }
.pager p { margin: 0; flex: 1; text-align: center; color: var(--muted); }
.cards { list-style: none; padding: 0; display: grid; grid-template-columns: repeat(auto-fill, minmax(20rem, 1fr)); gap: 1rem; }
.card { border: 1px solid var(--line); border-radius: 8px; overflow: hidden; display: flex; flex-direction: column; }
.card img { width: 100%; height: auto; aspect-ratio: 16 / 9; object-fit: cover; background: var(--panel); }
.card-body { padding: 0.5rem 1rem 0.75rem; }
.card-title { margin: 0.25rem 0 0.5rem; font-size: 1.05rem; }
.card-title a { text-decoration: none; }
.card-meta, .stories, .translations, .raw { font-size: 0.85rem; color: var(--muted); margin: 0.3rem 0; }
.kind { font-weight: 600; text-transform: uppercase; letter-spacing: 0.03em; }
.untranslated { color: var(--warn); }
/* A preview: six lines of an abstract; the raw JSON has it whole. */
.abstract { margin: 0.3rem 0 0.6rem; display: -webkit-box; -webkit-box-orient: vertical; -webkit-line-clamp: 6; line-clamp: 6; overflow: hidden; }
.label { font-weight: 600; }
`
