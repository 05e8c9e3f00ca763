"""The run viewer page's own style and script, written inline into every page it makes."""

from __future__ import annotations

import base64
import hashlib

#: The page's whole style: inline, since the page fetches nothing.
CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:0;background:#f6f7f9;color:#1d2330}
header{background:#1d2330;color:#fff;padding:12px 20px;position:sticky;top:0;z-index:2}
header h1{font-size:16px;margin:0 0 6px}
header input{width:min(480px,90%);padding:5px 8px;border-radius:4px;border:0}
main{padding:12px 20px}
.run{background:#fff;border:1px solid #d8dce3;border-radius:6px;margin-bottom:16px;
  padding:10px 14px}
.facts span{display:inline-block;margin-right:14px;color:#445}
.status-done{color:#17803d}.status-suspended{color:#a15c00}
.status-failed,.status-stopped{color:#b42318}
.turn{border-left:3px solid #7a8aa8;margin:10px 0;padding:4px 10px}
.turn h3{font-size:14px;margin:2px 0}
.model,.tool,.fold,.err,.pending{margin:4px 0;padding:4px 8px;border-radius:4px}
.model{background:#eef3fb}.tool{background:#f3f1fb}.fold{background:#eef8f0}
.err{background:#fdecea;color:#8a1c12}.pending{background:#fff4e0}
.tool.is-error{background:#fbeeee}
.badge{display:inline-block;font-size:12px;padding:0 6px;border-radius:8px;background:#dde3ee;
  margin-left:6px}
.badge.deny{background:#f6c9c4}.badge.ask{background:#ffe2a8}.badge.allow{background:#cfeed8}
pre{white-space:pre-wrap;word-break:break-word;margin:4px 0;background:#fafbfc;padding:6px;
  border:1px solid #e4e7ec;border-radius:4px}
details>summary{cursor:pointer;color:#2a4a8a}
.hidden{display:none}
mark{background:#ffe66d}
"""

#: The search box's script: the page's only one, made of no text a run holds.
SCRIPT = """
(function(){
  var box=document.getElementById('search');
  box.addEventListener('input',function(){
    var q=box.value.toLowerCase();
    document.querySelectorAll('.searchable').forEach(function(el){
      var hit=!q||el.textContent.toLowerCase().indexOf(q)>=0;
      el.classList.toggle('hidden',!hit);
      if(hit&&q){el.querySelectorAll('details').forEach(function(d){
        if(d.textContent.toLowerCase().indexOf(q)>=0){d.open=true;}});}
    });
  });
})();
"""

#: The page's script-src: the hash of :data:`SCRIPT`, so that only it runs. A ``<script>`` or an
#: ``onerror=`` that reached the page past its escaping would run under ``'unsafe-inline'``.
_DIGEST = base64.b64encode(hashlib.sha256(SCRIPT.encode()).digest()).decode()
SCRIPT_SRC = f"script-src 'sha256-{_DIGEST}'"
