// Apache ECharts, only the parts the console uses (tree-shaken by the build); canvas renderer,
// with ECharts' aria description so a screen reader gets a summary of each chart.
import { BarChart, LineChart } from 'echarts/charts';
import { AriaComponent, GridComponent, LegendComponent, MarkLineComponent, TitleComponent, TooltipComponent } from 'echarts/components';
import * as echarts from 'echarts/core';
import { CanvasRenderer } from 'echarts/renderers';

echarts.use([BarChart, LineChart, AriaComponent, GridComponent, LegendComponent, MarkLineComponent, TitleComponent, TooltipComponent, CanvasRenderer]);

export type Option = echarts.EChartsCoreOption;

/** Draw `option` in `el` (replacing a chart already there); `label` names the chart for screen readers. */
export function chart(el: HTMLElement, label: string, option: Option): echarts.ECharts {
  el.setAttribute('role', 'img');
  el.setAttribute('aria-label', label);
  const c = echarts.getInstanceByDom(el) ?? echarts.init(el, undefined, { renderer: 'canvas' });
  c.setOption({ aria: { enabled: true, label: { description: label } }, animation: false, ...option }, true);
  return c;
}

export const resizeAll = (root: HTMLElement) => {
  for (const el of root.querySelectorAll<HTMLElement>('[_echarts_instance_]')) echarts.getInstanceByDom(el)?.resize();
};
