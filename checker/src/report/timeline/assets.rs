//! The page's inline stylesheet and script: no external resources, so a
//! stored timeline opens anywhere, offline.

pub const STYLE: &str = "body{font:13px system-ui,sans-serif;margin:12px 16px;color:#222}h1{font-size:18px;margin:0 0 4px}h2{font-size:15px;margin:14px 0 4px}
.meta{color:#555}.sum{margin:4px 0 8px;font-weight:bold}.pass{color:#2e7d32}.bad{color:#d50000}
.legend{margin:2px 0;line-height:20px}.legend b{font-weight:600;margin-right:4px}.legend span{display:inline-block;margin-right:12px}
.sw{display:inline-block;width:14px;height:10px;margin-right:4px;vertical-align:middle;border:1px solid #888}
.controls{margin:6px 0}.controls button{font:12px system-ui,sans-serif;margin-right:4px;padding:2px 8px}.controls .view{color:#555;margin-left:8px}
svg{border:1px solid #ccc;background:#fff;user-select:none;cursor:grab}svg.drag{cursor:grabbing}
.lane{fill:#fff}.alt .lane{fill:#f3f5f8}.lname{font-size:12px;fill:#333;font-weight:600}.rule{stroke:#9e9e9e}
.sname{font-size:10px;font-weight:bold;fill:#616161;letter-spacing:.08em}.snote{font-size:10px;fill:#757575;font-style:italic}
.tick{stroke:#e4e4e4}.tlbl{font-size:10px;fill:#555}
.band{stroke-width:1}.band.instant{stroke-width:0}.flbl{font:11px monospace;fill:#212121;paint-order:stroke;stroke:#fff;stroke-width:2px;pointer-events:none}
.f-net{fill:#ffcc80;stroke:#ef6c00}.f-net.instant{fill:#ef6c00}.f-crash{fill:#bdbdbd;stroke:#424242}.f-crash.instant{fill:#424242}
.f-pause{fill:#cfd8dc;stroke:#546e7a}.f-pause.instant{fill:#546e7a}.f-conn{fill:#e1bee7;stroke:#8e24aa}.f-conn.instant{fill:#8e24aa}
.f-other{fill:#f8bbd0;stroke:#ad1457}.f-other.instant{fill:#ad1457}
.st-leader{fill:#fbc02d}.st-down{fill:#424242}.st-paused{fill:#78909c}.st-cut{fill:#ef6c00}
.stlbl{font:bold 9px sans-serif;fill:#fff;paint-order:stroke;stroke:#0007;stroke-width:2px;pointer-events:none}
.cst-paused{fill:url(#hatch-paused)}.cst-cut{fill:url(#hatch-cut)}.cst-down{fill:url(#hatch-paused)}
.cstlbl{font:bold 10px sans-serif;fill:#37474f;paint-order:stroke;stroke:#fff;stroke-width:3px;pointer-events:none}
.conn{opacity:.85}.connlbl{font:bold 8px sans-serif;fill:#fff;pointer-events:none}.cfault{fill:#8e24aa;opacity:.75}
.ok{fill:#43a047}.err{fill:#fb8c00}.info{fill:#8e24aa}.fail{fill:#e53935;opacity:.6}.pending{fill:#90caf9;stroke:#1e88e5;stroke-dasharray:3 2}
.op.viol{stroke:#d50000;stroke-width:2}.vmark{fill:#d50000;font-size:10px}
.vband{fill:#ffcdd2;stroke:#d50000}.vlbl{font:bold 11px monospace;fill:#b71c1c;pointer-events:none}
.vtag{font:bold 10px monospace;fill:#b71c1c;paint-order:stroke;stroke:#fff;stroke-width:3px;pointer-events:none}
.vspan{fill:#d50000;fill-opacity:.07;stroke:#d50000;stroke-width:1.5}.vlink{stroke:#d50000;stroke-width:1.5;stroke-dasharray:5 3;pointer-events:none}
.sess{stroke:#000;stroke-width:.5}.s-connected{fill:#2e7d32}.s-disconnected{fill:#f9a825}.s-expired{fill:#c62828}.s-closed{fill:#212121}.s-other{fill:#757575}
.watch{fill:#0277bd;font-size:9px}#guide{fill:#1e88e5;opacity:.08;pointer-events:none}
#tip{position:fixed;display:none;background:#263238;color:#fff;padding:6px 8px;border-radius:4px;font-size:12px;max-width:560px;pointer-events:none;white-space:pre-wrap;z-index:2}
.v{border-left:4px solid #d50000;padding:4px 8px;margin:6px 0;background:#fff5f5}.hint{color:#555;font-style:italic}";

/// Zoom (wheel, buttons, `#t=FROM-TO` in ms), pan (drag), hover details.
/// Every element with `data-t0` is re-placed from its instants; labels
/// marked `data-fit` are hidden when their bar is too narrow for them.
pub const SCRIPT: &str = r#"(function(){
var svg=document.getElementById('tl');if(!svg)return;
var L=+svg.getAttribute('data-left'),W=+svg.getAttribute('data-plotw'),END=+svg.getAttribute('data-end'),H=+svg.getAttribute('height');
var MIN=Math.min(END,1e6),v0=0,v1=END,tip=document.getElementById('tip'),guide=document.getElementById('guide'),axis=document.getElementById('axis');
var els=[].slice.call(svg.querySelectorAll('[data-t0]'));
els.forEach(function(e){if(e.hasAttribute('data-fit'))e._w=e.getComputedTextLength();});
function X(t){return L+(t-v0)/(v1-v0)*W;}
function fmt(t,step){return step>=1e9?(t/1e9)+' s':step>=1e6?Math.round(t/1e6)+' ms':(t/1e6).toFixed(3)+' ms';}
function ticks(){while(axis.firstChild)axis.removeChild(axis.firstChild);
var raw=Math.max((v1-v0)/10,1),mag=Math.pow(10,Math.floor(Math.log10(raw))),step=[1,2,5,10].map(function(m){return m*mag;}).filter(function(s){return s>=raw;})[0];
for(var t=Math.ceil(v0/step)*step;t<=v1;t+=step){var x=X(t),l=document.createElementNS(svg.namespaceURI,'line'),s=document.createElementNS(svg.namespaceURI,'text');
l.setAttribute('class','tick');l.setAttribute('x1',x);l.setAttribute('x2',x);l.setAttribute('y1',18);l.setAttribute('y2',H);
s.setAttribute('class','tlbl');s.setAttribute('x',x);s.setAttribute('y',13);s.setAttribute('text-anchor',x<L+20?'start':'middle');s.textContent=fmt(t,step);axis.appendChild(l);axis.appendChild(s);}}
function draw(){els.forEach(function(e){var t0=+e.getAttribute('data-t0'),x0=X(t0),t1=e.getAttribute('data-t1'),tag=e.tagName;
if(tag==='rect'){var w=t1===null?0:X(+t1)-x0;e.setAttribute('x',x0);e.setAttribute('width',Math.max(w,+(e.getAttribute('data-minw')||2)));}
else if(tag==='line'){e.setAttribute('x1',x0);e.setAttribute('x2',x0);}
else if(tag==='circle'){e.setAttribute('cx',x0);}
else{var x=x0+(+(e.getAttribute('data-dx')||0));if(t1!==null){var x1=X(+t1);if(x<L+2&&x1>L)x=L+2;
if(e._w!==undefined)e.style.display=(Math.min(x1,L+W)-x>=e._w+4)?'':'none';}e.setAttribute('x',x);}});
ticks();var f=(v0/1e6).toFixed(0)+'-'+(v1/1e6).toFixed(0);document.getElementById('view').textContent='showing '+f+' ms of '+(END/1e6).toFixed(0);
if(v0>0||v1<END){try{history.replaceState(null,'','#t='+f);}catch(e){}}}
function clamp(){var s=Math.min(Math.max(v1-v0,MIN),END);if(v0<0)v0=0;v1=v0+s;if(v1>END){v1=END;v0=END-s;}}
function zoom(t,f){var s=Math.min(Math.max((v1-v0)*f,MIN),END);v0=t-(t-v0)*s/(v1-v0);v1=v0+s;clamp();draw();}
function fromHash(){var m=/t=([0-9.]+)-([0-9.]+)/.exec(location.hash);if(!m)return false;var a=+m[1]*1e6,b=+m[2]*1e6;if(!(b>a))return false;v0=a;v1=b;clamp();draw();return true;}
svg.addEventListener('wheel',function(ev){ev.preventDefault();var r=svg.getBoundingClientRect(),t=v0+(ev.clientX-r.left-L)/W*(v1-v0);zoom(Math.min(Math.max(t,v0),v1),ev.deltaY>0?1.25:0.8);},{passive:false});
var drag=null;svg.addEventListener('mousedown',function(ev){if(ev.button===0){drag={x:ev.clientX,v0:v0,v1:v1};svg.classList.add('drag');}});
window.addEventListener('mousemove',function(ev){if(!drag)return;var dt=(ev.clientX-drag.x)/W*(drag.v1-drag.v0);v0=drag.v0-dt;v1=drag.v1-dt;clamp();draw();});
window.addEventListener('mouseup',function(){drag=null;svg.classList.remove('drag');});
document.querySelectorAll('[data-zoom]').forEach(function(b){b.addEventListener('click',function(){var k=b.getAttribute('data-zoom'),m=(v0+v1)/2,s=v1-v0;
if(k==='in')zoom(m,0.5);else if(k==='out')zoom(m,2);else if(k==='left'){v0-=s/3;v1-=s/3;clamp();draw();}else if(k==='right'){v0+=s/3;v1+=s/3;clamp();draw();}else{v0=0;v1=END;draw();try{history.replaceState(null,'','#');}catch(e){}}});});
window.addEventListener('hashchange',fromHash);
svg.addEventListener('mousemove',function(ev){var e=ev.target.closest?ev.target.closest('[data-tip]'):null;if(!e||drag){tip.style.display='none';guide.style.display='none';return;}
tip.textContent=e.getAttribute('data-tip');tip.style.display='block';var tx=ev.clientX+14;if(tx+tip.offsetWidth>window.innerWidth)tx=ev.clientX-14-tip.offsetWidth;tip.style.left=tx+'px';tip.style.top=(ev.clientY+14)+'px';
if(e.hasAttribute('data-t1')&&e.tagName==='rect'){var a=X(+e.getAttribute('data-t0')),b=Math.max(X(+e.getAttribute('data-t1')),a+2);guide.setAttribute('x',a);guide.setAttribute('width',b-a);guide.style.display='block';}else guide.style.display='none';});
svg.addEventListener('mouseleave',function(){tip.style.display='none';guide.style.display='none';});
if(!fromHash())draw();})();"#;
