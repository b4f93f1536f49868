/* neuron-stats HTML report (src/report/html.c embeds this file): lays out
 * the JSON document in <script id="ns-data"> as tables and SVG charts. No
 * network, no library: the page works from disk and from a CI artifact. */
(function () {
	'use strict';

	var SVG_NS = 'http://www.w3.org/2000/svg';
	var TOP_N = 15;

	/* ---- DOM helpers ---- */

	function el(tag, attrs, children) {
		var node = document.createElement(tag);
		setAttrs(node, attrs);
		append(node, children);
		return node;
	}

	function svgEl(tag, attrs, children) {
		var node = document.createElementNS(SVG_NS, tag);
		setAttrs(node, attrs);
		append(node, children);
		return node;
	}

	function setAttrs(node, attrs) {
		Object.keys(attrs || {}).forEach(function (k) {
			if (k === 'text')
				node.textContent = attrs[k];
			else if (attrs[k] !== null && attrs[k] !== undefined)
				node.setAttribute(k, attrs[k]);
		});
	}

	function append(node, children) {
		(children || []).forEach(function (c) {
			if (c === null || c === undefined)
				return;
			node.appendChild(typeof c === 'string' ? document.createTextNode(c) : c);
		});
	}

	/* ---- numbers ---- */

	/* µs as PyTorch's table prints times: s, ms or us by size, 3 decimals. */
	function fmtTime(us) {
		var a = Math.abs(us);
		if (a >= 1e6)
			return (us / 1e6).toFixed(3) + 's';
		if (a >= 1e3)
			return (us / 1e3).toFixed(3) + 'ms';
		return us.toFixed(3) + 'us';
	}

	function fmtBytes(b) {
		var a = Math.abs(b), units = ['b', 'KB', 'MB', 'GB'], k = 0;
		while (a >= 1024 && k < units.length - 1) {
			a /= 1024;
			b /= 1024;
			k++;
		}
		return k ? b.toFixed(2) + ' ' + units[k] : String(b) + ' b';
	}

	function fmtPct(x) {
		return (x * 100).toFixed(2) + '%';
	}

	function cut(s, n) {
		return s.length > n ? s.slice(0, n - 1) + '\u2026' : s;
	}

	/* ---- charts ---- */

	/* Horizontal bars: items [{label, value}], largest first. */
	function barChart(title, items, cls, fmt) {
		var rowH = 18, labelW = 260, width = 720, barW = width - labelW - 90;
		var max = items.reduce(function (m, it) { return Math.max(m, Math.abs(it.value)); }, 0) || 1;
		var chart = svgEl('svg', { viewBox: '0 0 ' + width + ' ' + (items.length * rowH + 8), role: 'img',
			'aria-label': title });
		items.forEach(function (it, i) {
			var y = i * rowH + 4, w = Math.max(1, barW * Math.abs(it.value) / max);
			chart.appendChild(svgEl('text', { x: labelW - 6, y: y + 12, 'text-anchor': 'end', text: cut(it.label, 42) },
				[svgEl('title', { text: it.label })]));
			chart.appendChild(svgEl('rect', { x: labelW, y: y + 2, width: w, height: rowH - 5,
				'class': it.cls || cls }, [svgEl('title', { text: it.label + ': ' + fmt(it.value) })]));
			chart.appendChild(svgEl('text', { x: labelW + w + 4, y: y + 12, text: fmt(it.value) }));
		});
		return el('div', { 'class': 'chart' }, [el('h3', { text: title }),
			items.length ? chart : el('p', { 'class': 'muted', text: 'nothing to show' })]);
	}

	function topN(rows, key) {
		return rows.filter(function (r) { return r[key] > 0; })
			.sort(function (a, b) { return b[key] - a[key] || (a.name < b.name ? -1 : a.name > b.name); })
			.slice(0, TOP_N)
			.map(function (r) { return { label: r.name, value: r[key] }; });
	}

	/* One bar per step: its time, the device's busy part in front. */
	function stepChart(title, steps) {
		var h = 160, w = 720, left = 60, bw = Math.max(3, Math.min(40, (w - left - 10) / steps.length - 2));
		var max = steps.reduce(function (m, s) { return Math.max(m, s.dur_us); }, 0) || 1;
		var chart = svgEl('svg', { viewBox: '0 0 ' + w + ' ' + (h + 36), role: 'img', 'aria-label': title });
		chart.appendChild(svgEl('line', { x1: left, y1: h, x2: w, y2: h, 'class': 'axis' }));
		chart.appendChild(svgEl('text', { x: left - 4, y: 12, 'text-anchor': 'end', text: fmtTime(max) }));
		steps.forEach(function (s, i) {
			var x = left + 4 + i * (bw + 2), total = h * s.dur_us / max;
			var busy = h * Math.min(s.device_busy_us, s.dur_us) / max;
			var tip = 'step ' + s.step + ': ' + fmtTime(s.dur_us) + ', device busy ' + fmtTime(s.device_busy_us) +
				' (' + fmtPct(s.dur_us ? Math.min(1, s.device_busy_us / s.dur_us) : 0) + ')';
			chart.appendChild(svgEl('rect', { x: x, y: h - total, width: bw, height: total, 'class': 'bar-idle' },
				[svgEl('title', { text: tip })]));
			chart.appendChild(svgEl('rect', { x: x, y: h - busy, width: bw, height: busy, 'class': 'bar-dev' },
				[svgEl('title', { text: tip })]));
			if (steps.length <= 30 || i % Math.ceil(steps.length / 30) === 0)
				chart.appendChild(svgEl('text', { x: x + bw / 2, y: h + 14, 'text-anchor': 'middle', text: String(s.step) }));
		});
		chart.appendChild(svgEl('text', { x: (w + left) / 2, y: h + 32, 'text-anchor': 'middle', text: 'step' }));
		return el('div', { 'class': 'chart' }, [el('h3', { text: title }), chart,
			el('div', { 'class': 'legend' }, [el('span', { 'class': 'k-dev', text: 'device busy' }),
				el('span', { 'class': 'k-idle', text: 'device idle' })])]);
	}

	/* ---- the sortable, filterable table ---- */

	function cellValue(col, v, device) {
		if (v === null || v === undefined)
			return '';
		switch (col.kind) {
		case 'time': return fmtTime(v);
		case 'bytes': return fmtBytes(v);
		case 'flag': return v ? 'yes' : '';
		default: return String(v);
		}
	}

	/* Whether a column is worth showing: text with some text, a number
	 * not zero everywhere (device columns only with a device). */
	function shownColumns(trace) {
		return trace.columns.filter(function (c) {
			if (c.key === 'name' || c.key === 'calls' || c.key === 'self_cpu_us' || c.key === 'cpu_total_us')
				return true;
			return trace.rows.some(function (r) {
				var v = r[c.key];
				return c.kind === 'text' ? typeof v === 'string' && v !== '' : typeof v === 'number' && v !== 0;
			});
		});
	}

	function compare(key, text, dir) {
		return function (a, b) {
			var x = a.row[key], y = b.row[key], c;
			if (text)
				c = String(x || '') < String(y || '') ? -1 : String(x || '') > String(y || '') ? 1 : 0;
			else
				c = (x || 0) - (y || 0);
			return dir * c || a.index - b.index;
		};
	}

	/* The key_averages table of trace number ti: every row; a click on a
	 * header sorts by it (again: the other way), the box filters by name. */
	function rowTable(trace, ti, barKeys) {
		var cols = shownColumns(trace);
		var items = trace.rows.map(function (r, i) { return { row: r, index: i }; });
		var maxOf = {};
		barKeys.forEach(function (k) {
			maxOf[k] = trace.rows.reduce(function (m, r) { return Math.max(m, r[k] || 0); }, 0) || 1;
		});
		var defaultKey = trace.self_device_time_total_us > 0 ? 'self_device_us' : 'self_cpu_us';
		var state = { key: trace.sort_key !== undefined ? trace.sort_key : defaultKey, dir: -1, filter: '' };
		var tbody = el('tbody', { id: 't' + ti + '-body' });
		var count = el('span', { id: 't' + ti + '-count', 'class': 'muted' });
		var heads = cols.map(function (c) {
			var th = el('th', { 'class': c.kind === 'text' ? 'text' : null, 'data-key': c.key, scope: 'col',
				title: 'sort by ' + c.header, text: c.header });
			th.addEventListener('click', function () {
				if (state.key === c.key)
					state.dir = -state.dir;
				else
					state.key = c.key, state.dir = c.kind === 'text' ? 1 : -1;
				render();
			});
			return th;
		});
		var input = el('input', { id: 't' + ti + '-filter', type: 'search', placeholder: 'filter by name',
			'aria-label': 'filter rows by name' });
		input.addEventListener('input', function () {
			state.filter = input.value.toLowerCase();
			render();
		});

		function rowElement(item) {
			var tr = el('tr', { 'data-row': item.index });
			cols.forEach(function (c) {
				var v = item.row[c.key], text = cellValue(c, v);
				if (maxOf[c.key] !== undefined) {
					var share = Math.max(0, (v || 0) / maxOf[c.key]);
					tr.appendChild(el('td', { 'class': 'bar ' + (c.key === 'self_cpu_us' ? 'cpu' : 'dev') },
						[el('div', { 'class': 'fill', style: 'width:' + (share * 100).toFixed(1) + '%' }),
							el('span', { text: text })]));
				} else {
					tr.appendChild(el('td', { 'class': c.kind === 'text' ? 'text' + (c.key === 'name' ? ' name' : '') : null,
						title: c.key === 'name' ? text : null, text: text }));
				}
			});
			return tr;
		}

		function render() {
			var col = cols.filter(function (c) { return c.key === state.key; })[0]; /* none: the rows' own order */
			var shown = items.filter(function (it) {
				return !state.filter || String(it.row.name).toLowerCase().indexOf(state.filter) >= 0;
			}).sort(col ? compare(col.key, col.kind === 'text', state.dir) : function (a, b) { return a.index - b.index; });
			heads.forEach(function (th) {
				th.setAttribute('aria-sort', col && th.getAttribute('data-key') === col.key ?
					(state.dir < 0 ? 'descending' : 'ascending') : 'none');
			});
			while (tbody.firstChild)
				tbody.removeChild(tbody.firstChild);
			var frag = document.createDocumentFragment();
			shown.forEach(function (it) { frag.appendChild(rowElement(it)); });
			tbody.appendChild(frag);
			count.textContent = shown.length + ' of ' + items.length + ' rows';
		}
		render();
		return el('div', {}, [el('div', { 'class': 'filter' }, [input, ' ', count]),
			el('div', { 'class': 'table-wrap' }, [el('table', { id: 't' + ti + '-table' },
				[el('thead', {}, [el('tr', {}, heads)]), tbody])])]);
	}

	/* ---- provenance ---- */

	function provenance(trace) {
		var p = trace.provenance, items = [['file', p.file]];
		if (p.bytes !== null)
			items.push(['size', p.bytes + ' bytes']);
		items.push(['events', p.trace_events + ' in traceEvents, ' + p.kept_events + ' kept, ' + p.threads + ' threads']);
		if (trace.rank !== undefined)
			items.push(['rank', trace.rank + (p.world_size !== null ? ' of ' + p.world_size : '')]);
		p.metadata.forEach(function (kv) {
			if (kv[0] !== 'traceEvents')
				items.push([kv[0], kv[1]]);
		});
		var versions = p.metadata.filter(function (kv) { return /version/i.test(kv[0]); });
		var dl = el('dl', { 'class': 'prov' });
		items.forEach(function (kv) {
			dl.appendChild(el('dt', { text: kv[0] }));
			dl.appendChild(el('dd', { 'class': 'mono', text: kv[1] }));
		});
		return el('div', {}, [el('h3', { text: 'Provenance' }),
			el('p', { 'class': 'muted', text: versions.length ?
				'Versions found in the trace: ' + versions.map(function (kv) { return kv[0] + ' ' + kv[1]; }).join(', ') :
				'No PyTorch or Neuron version recorded in the trace.' }), dl]);
	}

	function warnings(trace) {
		var p = trace.provenance, out = [];
		if (p.truncated_at !== null)
			out.push('The trace is truncated: it stops at byte ' + p.truncated_at + '; the rows cover what came before.');
		if (p.untimed_launches)
			out.push(p.untimed_launches + ' device launches without device events (legacy autograd export): no device time.');
		(trace.explorer_warnings || []).forEach(function (w) {
			out.push('neuron-explorer: ' + (w.category ? w.category + ': ' : '') + w.message + ' (' + w.file + ')');
		});
		return out.map(function (t) { return el('div', { 'class': 'warn', text: t }); });
	}

	/* ---- the report ---- */

	function traceTitle(trace) {
		return trace.path + (trace.rank !== undefined ? ' (rank ' + trace.rank + ')' : '');
	}

	function neffSection(trace) {
		if (!trace.neffs.length)
			return null;
		var items = trace.neffs.slice().sort(function (a, b) { return b.device_us - a.device_us || (a.neff < b.neff ? -1 : 1); })
			.map(function (n) { return { label: 'NEFF ' + n.neff + ' (' + n.calls + ' runs)', value: n.device_us }; });
		return barChart('Device time per NEFF', items, 'bar-dev', fmtTime);
	}

	/* A plain table: cols [{key, header, kind}], rows of objects. */
	function staticTable(cols, rows, cls) {
		return el('div', { 'class': 'table-wrap' }, [el('table', { 'class': cls || null }, [
			el('thead', {}, [el('tr', {}, cols.map(function (c) {
				return el('th', { 'class': c.kind === 'text' ? 'text' : null, scope: 'col', text: c.header });
			}))]),
			el('tbody', {}, rows.map(function (r) {
				return el('tr', {}, cols.map(function (c) {
					return el('td', { 'class': c.kind === 'text' ? 'text' : null, text: cellValue(c, r[c.key]) });
				}));
			}))])]);
	}

	/* Engine active time (--engines): the device rows' time per engine, in
	 * total (a row and its device op would count twice: device rows only)
	 * and per row. */
	function engineSection(trace) {
		if (!trace.engines || !trace.engines.length)
			return null;
		var devRows = {};
		trace.rows.forEach(function (r) { if (r.self_device_us > 0) devRows[r.name] = true; });
		var keys = Object.keys(trace.engines[0]).filter(function (k) { return /_us$/.test(k); });
		var rows = trace.engines.filter(function (r) { return devRows[r.name]; });
		var totals = keys.map(function (k) {
			return { label: k.replace(/_us$/, ''), value: rows.reduce(function (s, r) { return s + (r[k] || 0); }, 0) };
		});
		var cols = [{ key: 'name', header: 'Name', kind: 'text' }].concat(keys.map(function (k) {
			return { key: k, header: k.replace(/_us$/, ''), kind: 'time' };
		}));
		return el('div', { 'class': 'neuron' }, [el('div', { 'class': 'charts' }, [barChart('Engine active time (device ops)', totals, 'bar-dev', fmtTime)]),
			el('h3', { text: 'Engine active time per op' }), staticTable(cols, trace.engines),
			el('p', { 'class': 'muted mono', text: (trace.sources || []).join('\n') })]);
	}

	var SUMMARY_COLS = [{ key: 'neff', header: 'NEFF', kind: 'text' }, { key: 'core', header: 'Core', kind: 'count' },
		{ key: 'instructions', header: 'Instructions', kind: 'count' },
		{ key: 'instruction_time_us', header: 'Instruction time', kind: 'time' },
		{ key: 'total_time_us', header: 'Total time', kind: 'time' }, { key: 'mfu_percent', header: 'MFU %', kind: 'count' },
		{ key: 'mbu_percent', header: 'MBU %', kind: 'count' }, { key: 'hbm_read_bytes', header: 'HBM read', kind: 'bytes' },
		{ key: 'hbm_write_bytes', header: 'HBM write', kind: 'bytes' },
		{ key: 'spill_save_bytes', header: 'Spill save', kind: 'bytes' },
		{ key: 'spill_reload_bytes', header: 'Spill reload', kind: 'bytes' },
		{ key: 'throttle_us', header: 'Throttle', kind: 'time' }];

	/* The device profiles' summary metrics, one row per NEFF and core. */
	function neffSummarySection(trace) {
		if (!trace.neff_summary || !trace.neff_summary.length)
			return null;
		return el('div', { 'class': 'neuron' }, [el('h3', { text: 'NEFF summary (device profiles)' }),
			staticTable(SUMMARY_COLS, trace.neff_summary)]);
	}

	function traceSection(trace, ti) {
		var dev = trace.device, hasDev = trace.self_device_time_total_us > 0;
		var totals = el('div', { 'class': 'totals' }, [
			el('div', {}, ['Self CPU time total', el('b', { text: fmtTime(trace.self_cpu_time_total_us) })]),
			hasDev ? el('div', {}, ['Self ' + dev + ' time total', el('b', { text: fmtTime(trace.self_device_time_total_us) })]) : null,
			el('div', {}, ['Rows', el('b', { text: String(trace.rows.length) })]),
			el('div', {}, ['Steps', el('b', { text: String(trace.steps.length) })])]);
		var charts = el('div', { 'class': 'charts' }, [
			hasDev ? barChart('Top ' + TOP_N + ' ops by Self ' + dev, topN(trace.rows, 'self_device_us'), 'bar-dev', fmtTime) : null,
			barChart('Top ' + TOP_N + ' ops by Self CPU', topN(trace.rows, 'self_cpu_us'), 'bar-cpu', fmtTime),
			trace.steps.length ? stepChart('Steps: time, ' + (dev || 'device') + ' busy and idle', trace.steps) : null,
			neffSection(trace)]);
		var bars = hasDev ? ['self_cpu_us', 'self_device_us'] : ['self_cpu_us'];
		return el('section', { id: 'trace-' + ti }, [el('h2', { text: traceTitle(trace) })].concat(warnings(trace), [totals,
			charts, engineSection(trace), neffSummarySection(trace), el('h3', { text: 'key_averages()' }),
			rowTable(trace, ti, bars), provenance(trace)]));
	}

	/* Rank x step: each cell the step's time; a slow rank stands out. */
	function heatMap(traces) {
		var ranked = traces.filter(function (t) { return t.steps.length; });
		if (traces.length < 2 || !ranked.length)
			return null;
		var numbers = [];
		ranked.forEach(function (t) {
			t.steps.forEach(function (s) { if (numbers.indexOf(s.step) < 0) numbers.push(s.step); });
		});
		numbers.sort(function (a, b) { return a - b; });
		var all = [];
		ranked.forEach(function (t) { t.steps.forEach(function (s) { all.push(s.dur_us); }); });
		var lo = Math.min.apply(null, all), hi = Math.max.apply(null, all);
		var rows = ranked.map(function (t, k) {
			var cells = numbers.map(function (n) {
				var s = t.steps.filter(function (x) { return x.step === n; })[0];
				if (!s)
					return el('td', {});
				var f = hi > lo ? (s.dur_us - lo) / (hi - lo) : 0;
				return el('td', { style: 'background:hsl(' + (120 - 120 * f).toFixed(0) + ',70%,' + (85 - 25 * f).toFixed(0) + '%)',
					title: traceTitle(t) + ', step ' + n + ': ' + fmtTime(s.dur_us), text: fmtTime(s.dur_us) });
			});
			return el('tr', {}, [el('th', { 'class': 'text', scope: 'row',
				text: t.rank !== undefined ? 'rank ' + t.rank : 'trace ' + k }, [])].concat(cells));
		});
		return el('section', { id: 'heatmap' }, [el('h2', { text: 'Step time per rank' }),
			el('p', { 'class': 'muted', text: 'Green: the fastest step of any rank; red: the slowest.' }),
			el('div', { 'class': 'table-wrap' }, [el('table', { 'class': 'heat' }, [el('thead', {}, [el('tr', {},
				[el('th', { text: 'step' })].concat(numbers.map(function (n) { return el('th', { text: String(n) }); })))]),
			el('tbody', {}, rows)])])]);
	}

	function reportPage(data, app) {
		app.appendChild(el('h1', { text: 'neuron-stats report' }));
		app.appendChild(el('p', { 'class': 'muted' }, ['Input: ', el('code', { text: data.input }), ', ' +
			data.traces.length + (data.traces.length === 1 ? ' trace' : ' traces')]));
		append(app, [heatMap(data.traces)]);
		data.traces.forEach(function (t, i) { app.appendChild(traceSection(t, i)); });
	}

	/* ---- the diff (diff --format json's document, docs/diff.md) ---- */

	function diffMetric(row, key) {
		return row[key] || {};
	}

	function pValue(m) {
		return m.steps && m.steps.p !== undefined && m.steps.p !== null ? m.steps.p : null;
	}

	function diffPage(data, app) {
		var t = data.totals || {}, dev = t.self_device || {};
		var key = dev.base_us > 0 || dev.new_us > 0 ? 'self_device' : 'self_cpu';
		var label = key === 'self_device' ? 'Self ' + (data.device || 'device') : 'Self CPU';
		app.appendChild(el('h1', { text: 'neuron-stats diff' }));
		app.appendChild(el('p', { 'class': 'muted' }, ['Base: ', el('code', { text: data.base.input }), ', new: ',
			el('code', { text: data.new.input })]));
		append(app, data.warning ? [el('div', { 'class': 'warn', text: data.warning })] : []);
		var totals = ['self_device', 'self_cpu'].filter(function (k) { return t[k]; }).map(function (k) {
			var m = t[k];
			return el('div', {}, [(k === 'self_cpu' ? 'Self CPU' : 'Self ' + (data.device || 'device')) + ' (' + m.verdict + ')',
				el('b', { text: fmtTime(m.base_us) + ' \u2192 ' + fmtTime(m.new_us) + ' (' + signed(m.change_pct, '%') + ')' })]);
		});
		app.appendChild(el('div', { 'class': 'totals' }, totals.concat(Object.keys(data.verdicts || {}).map(function (v) {
			return el('div', {}, [v, el('b', { text: String(data.verdicts[v]) })]);
		}))));
		if (data.rule && data.rule.text)
			app.appendChild(el('p', { 'class': 'muted', text: 'Rule: ' + data.rule.text }));
		var changes = data.rows.filter(function (r) { return diffMetric(r, key).change_us; })
			.sort(function (a, b) {
				return Math.abs(diffMetric(b, key).change_us) - Math.abs(diffMetric(a, key).change_us) ||
					(a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
			}).slice(0, TOP_N);
		app.appendChild(waterfall('Largest changes of ' + label + ' (new \u2212 base), with verdict and p-value', changes, key));
		app.appendChild(el('h2', { text: 'Rows' }));
		app.appendChild(diffTable(data));
	}

	function signed(x, unit) {
		if (x === null || x === undefined)
			return '';
		if (typeof x === 'string')
			return x;
		return (x > 0 ? '+' : '') + x.toFixed(2) + unit;
	}

	/* Each change a step from the running total, largest first. */
	function waterfall(title, rows, key) {
		var w = 900, labelW = 300, rowH = 20, plotW = w - labelW - 260;
		var run = 0, lo = 0, hi = 0;
		var steps = rows.map(function (r) {
			var d = diffMetric(r, key).change_us, from = run;
			run += d;
			lo = Math.min(lo, from, run);
			hi = Math.max(hi, from, run);
			return { row: r, from: from, to: run, delta: d };
		});
		var span = hi - lo || 1, sx = function (v) { return labelW + plotW * (v - lo) / span; };
		var chart = svgEl('svg', { viewBox: '0 0 ' + w + ' ' + (steps.length * rowH + 10), role: 'img', 'aria-label': title });
		chart.appendChild(svgEl('line', { x1: sx(0), y1: 0, x2: sx(0), y2: steps.length * rowH + 10, 'class': 'axis' }));
		steps.forEach(function (s, i) {
			var y = i * rowH + 4, x0 = sx(Math.min(s.from, s.to)), x1 = sx(Math.max(s.from, s.to));
			var m = diffMetric(s.row, key), p = pValue(m);
			var note = (s.delta > 0 ? '+' : '\u2212') + fmtTime(Math.abs(s.delta)) + '  ' + m.verdict +
				(p !== null ? '  p=' + Number(p).toPrecision(3) : '');
			chart.appendChild(svgEl('text', { x: labelW - 6, y: y + 13, 'text-anchor': 'end', text: cut(s.row.name, 44) },
				[svgEl('title', { text: s.row.name })]));
			chart.appendChild(svgEl('rect', { x: x0, y: y + 2, width: Math.max(1, x1 - x0), height: rowH - 6,
				'class': m.verdict === 'regressed' || m.verdict === 'new' ? 'bar-bad' : m.verdict === 'improved' ||
					m.verdict === 'removed' ? 'bar-good' : 'bar-neutral' }, [svgEl('title', { text: s.row.name + ': ' + note })]));
			chart.appendChild(svgEl('text', { x: sx(hi) + 6, y: y + 13, text: note }));
		});
		return el('div', { 'class': 'chart wide' }, [el('h3', { text: title }),
			steps.length ? chart : el('p', { 'class': 'muted', text: 'no change' }),
			el('div', { 'class': 'legend' }, [el('span', { 'class': 'k-bad', text: 'regressed, new' }),
				el('span', { 'class': 'k-good', text: 'improved, removed' }),
				el('span', { 'class': 'k-neutral', text: 'within the noise' })])]);
	}

	function diffTable(data) {
		var metrics = ['self_device', 'self_cpu'].filter(function (k) {
			return data.rows.some(function (r) { return r[k] && (r[k].base_us || r[k].new_us); });
		});
		var cols = [{ key: 'name', header: 'Name', kind: 'text' }, { key: 'verdict', header: 'Verdict', kind: 'text' }];
		metrics.forEach(function (m) {
			var label = m === 'self_cpu' ? 'Self CPU' : 'Self ' + (data.device || 'device');
			cols.push({ key: m + '.base', header: label + ' base', kind: 'time' },
				{ key: m + '.new', header: label + ' new', kind: 'time' },
				{ key: m + '.pct', header: label + ' %', kind: 'count' },
				{ key: m + '.p', header: label + ' p', kind: 'count' });
		});
		cols.push({ key: 'calls.base', header: 'Calls base', kind: 'count' }, { key: 'calls.new', header: 'Calls new', kind: 'count' });
		var flat = data.rows.map(function (r) {
			var o = { name: r.name, verdict: r.verdict, 'calls.base': (r.calls || {}).base, 'calls.new': (r.calls || {}).new };
			metrics.forEach(function (m) {
				var v = r[m] || {};
				o[m + '.base'] = v.base_us;
				o[m + '.new'] = v.new_us;
				o[m + '.pct'] = typeof v.change_pct === 'number' ? v.change_pct : null;
				o[m + '.p'] = pValue(v);
			});
			return o;
		});
		/* (opens in the diff's own order: --sort's, largest change first) */
		return rowTable({ columns: cols, rows: flat, self_device_time_total_us: 0, sort_key: null }, 0, []);
	}

	function main() {
		var app = document.getElementById('app');
		var data = JSON.parse(document.getElementById('ns-data').textContent);
		if (/^neuron-stats-diff\//.test(data.schema || ''))
			diffPage(data, app);
		else
			reportPage(data, app);
		document.body.setAttribute('data-ready', 'true');
	}

	main();
}());
